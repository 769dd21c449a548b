// pitchside venue console: renders GET /api/state, then follows
// GET /api/events (Server-Sent Events). No framework, no external requests.
// Text from the gateway only ever goes into textContent, never into HTML.
'use strict';
(function () {
  var NAME_KEY = 'pitchside.ackName';
  var FEED_MAX = 200;          // alerts shown, as the gateway keeps
  var DEVICES_SHOWN = 300;     // device rows drawn (silent ones come first)
  var STALE_MS = 5000;         // no message for this long: reconnect

  var state = null;            // the latest state doc
  var stateAt = 0;             // performance.now() when it arrived
  var order = new Map();       // feed key -> first-seen number (bigger = newer)
  var nextOrder = 1;
  var localItems = new Map();  // feed key -> alert received as an event
  var localAcks = new Map();   // alert_id -> [ack] received as events or replies
  var deviceNow = new Map();   // sensor/device_id -> silent, from device events since the last state
  var source = null, lastMessage = 0, retryMs = 1000, retryTimer = 0, live = false, refusals = 0;
  var ackFor = null;           // the alert the ack form is open for

  function $(id) { return document.getElementById(id); }

  function h(tag, cls, text) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (text != null) el.textContent = text;
    return el;
  }

  function setText(el, text) {
    text = text == null ? '' : String(text);
    if (el.textContent !== text) el.textContent = text;
  }

  function setClass(el, cls, on) {
    if (el.classList.contains(cls) !== !!on) el.classList.toggle(cls, !!on);
  }

  function show(el, on) {
    if (el.hidden === !!on) el.hidden = !on;
  }

  function num(v, digits) {
    return v == null || isNaN(v) ? '—' : Number(v).toFixed(digits);
  }

  function parseTime(iso) {
    if (!iso) return null;
    var d = new Date(String(iso).replace(/(\.\d{3})\d+/, '$1'));
    return isNaN(d.getTime()) ? null : d;
  }

  function clock(iso) {
    var d = parseTime(iso);
    return d ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }) : '—';
  }

  function ago(seconds) {
    if (seconds == null || isNaN(seconds)) return '—';
    var s = Math.max(0, Math.floor(seconds));
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s ago';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min ago';
  }

  function bytes(n) {
    if (n == null) return '—';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }

  // Seconds since a reading: the state's value, plus the time since that state arrived.
  function sinceNow(base) {
    return base + (performance.now() - stateAt) / 1000;
  }

  function setSince(el, base) {
    if (base == null) { delete el.dataset.since; setText(el, '—'); return; }
    el.dataset.since = base;
    setText(el, ago(sinceNow(base)));
  }

  var METRICS = {
    heart_rate: ['Heart rate', 'bpm', 0], acceleration: ['Acceleration', '', 2],
    running_dist: ['Running distance', 'm', 1], ball_speed: ['Ball speed', 'km/h', 1],
    spin_rate: ['Spin', 'rpm', 0], impact_x: ['Impact x', '', 2], impact_y: ['Impact y', '', 2],
    decibels: ['Noise', 'dB', 1], density: ['Crowd density', '/m²', 2]
  };

  function metricText(metric, value) {
    var m = METRICS[metric] || [metric, '', 2];
    return m[0] + ' ' + num(value, m[2]) + (m[1] ? ' ' + m[1] : '');
  }

  // Keyed list update: reuses elements by key, so nothing flickers and
  // existing elements are not moved when a new one is put on top.
  function sync(container, items, keyOf, make, update) {
    var old = new Map(), wanted = new Set(), i, el, k;
    for (i = 0; i < container.children.length; i++) old.set(container.children[i]._key, container.children[i]);
    for (i = 0; i < items.length; i++) wanted.add(keyOf(items[i]));
    var ref = container.firstElementChild;
    for (i = 0; i < items.length; i++) {
      while (ref && !wanted.has(ref._key)) ref = ref.nextElementSibling;
      k = keyOf(items[i]);
      el = old.get(k);
      if (el) old.delete(k); else { el = make(items[i]); el._key = k; }
      update(el, items[i]);
      if (el === ref) ref = ref.nextElementSibling;
      else container.insertBefore(el, ref);
    }
    old.forEach(function (e) { e.remove(); });
  }

  function playerName(id) {
    var ps = state ? state.players : [];
    for (var i = 0; i < ps.length; i++) if (ps[i].player_id === id) return ps[i].player_name;
    return null;
  }

  function who(a) {
    if (a.player_id != null) {
      var name = a.player_name || playerName(a.player_id);
      return (name ? name + ' ' : 'Player ') + '#' + a.player_id;
    }
    if (a.zone_id) return 'Zone ' + a.zone_id;
    return (a.sensor ? a.sensor + ' ' : '') + (a.device_id || 'unknown device');
  }

  function feedKey(a) {
    if (a.alert_id) return a.alert_id;
    return 'device/' + a.sensor + '/' + a.device_id + '/' + a.event + '/' + a.at;
  }

  function kindOf(a) {
    return a.kind || (a.event ? 'device' : a.window_end ? 'fatigue' : a.rule ? 'load' : 'anomaly');
  }

  function describe(a) {
    var kind = kindOf(a);
    if (kind === 'fatigue') {
      return ['FATIGUE', 'Heart rate ' + num(a.heart_rate_mean, 0) + ' bpm on average in the minute to ' +
        clock(a.window_end) + ' (usual ' + num(a.baseline_mean, 0) + ' ± ' + num(a.baseline_std, 1) + ')', a.window_end];
    }
    if (kind === 'load') {
      var what = a.watch === 'hr_pct'
        ? 'Heart rate at ' + num(a.value, 0) + '\u00a0% of HRmax, held at or above ' + num(a.threshold, 0) + '\u00a0%'
        : a.watch === 'sprints'
          ? num(a.value, 0) + ' sprints within the rule\u2019s time'
          : 'Match load at ' + num(a.value, 0) + '\u00a0% of the target (rule: ' + num(a.threshold, 0) + '\u00a0%)';
      return ['LOAD', what + ' · rule ' + a.rule, a.event_time];
    }
    if (kind === 'device') {
      var silent = a.event === 'silent';
      var dev = (a.player_id != null || a.zone_id) ? ' (' + a.device_id + ')' : '';
      return [silent ? 'SILENT' : 'BACK', (silent ? 'Device silent: nothing since ' : 'Device back: was silent since ') +
        clock(a.last_seen) + dev, a.at];
    }
    var z = Number(a.z_score), digits = (METRICS[a.metric] || [0, 0, 2])[2];
    var text = metricText(a.metric, a.value) + ', far ' + (z >= 0 ? 'above' : 'below') + ' usual ' +
      num(a.baseline_mean, digits) + '\u00a0±\u00a0' + num(a.baseline_std, digits) + ' (z\u00a0' + (z >= 0 ? '+' : '−') + num(Math.abs(z), 1) + ')';
    if (a.delivery_id != null) text += ', delivery ' + a.delivery_id;
    if (a.player_id != null && a.device_id) text += ' · ' + a.device_id;
    return ['ANOMALY', text, a.event_time || a.detected_at];
  }

  function acksOf(a) {
    var all = (a.acks || []).slice(), seen = new Set(), out = [];
    (localAcks.get(a.alert_id) || []).forEach(function (k) { all.push(k); });
    all.forEach(function (k) {
      var key = k.by + '\u0000' + k.acked_at;
      if (!seen.has(key)) { seen.add(key); out.push(k); }
    });
    return out;
  }

  // ---- the feed -----------------------------------------------------------

  function remember(key) {
    if (!order.has(key)) order.set(key, nextOrder++);
  }

  function feed() {
    var byKey = new Map(), list = [];
    var fromState = state ? state.alerts || [] : [];
    for (var i = fromState.length - 1; i >= 0; i--) remember(feedKey(fromState[i]));
    fromState.forEach(function (a) { byKey.set(feedKey(a), a); });
    var inState = new Set(byKey.keys());
    localItems.forEach(function (a, k) { if (!byKey.has(k)) byKey.set(k, a); });
    byKey.forEach(function (a, k) { list.push([order.get(k) || 0, k, a]); });
    list.sort(function (x, y) { return y[0] - x[0]; });
    list = list.slice(0, FEED_MAX);
    var keep = new Set(list.map(function (x) { return x[1]; }));
    localItems.forEach(function (_, k) { if (!keep.has(k)) localItems.delete(k); });
    // Forget the place of what is gone from both, never of what the gateway still sends.
    order.forEach(function (_, k) { if (!keep.has(k) && !inState.has(k)) order.delete(k); });
    return list.map(function (x) { return x[2]; });
  }

  function makeAlert() {
    var li = h('li', 'alert');
    var head = li.appendChild(h('div', 'head'));
    head.appendChild(h('span', 'tag'));
    head.appendChild(h('span', 'who'));
    head.appendChild(h('time', 'when'));
    li.appendChild(h('div', 'what'));
    li.appendChild(h('div', 'acks'));
    var b = li.appendChild(h('button', 'ack', 'Mark seen'));
    b.type = 'button';
    b.addEventListener('click', function () { openAck(li._alert); });
    return li;
  }

  function updateAlert(li, a) {
    li._alert = a;
    var kind = kindOf(a), d = describe(a), acks = kind === 'device' ? [] : acksOf(a);
    li.dataset.alertId = feedKey(a);
    li.className = 'alert kind-' + kind + (kind === 'device' ? ' ev-' + a.event : '') +
      (acks.length ? ' seen' : kind === 'device' ? '' : ' open');
    var head = li.firstChild;
    setText(head.children[0], d[0]);
    setText(head.children[1], who(a));
    setText(head.children[2], clock(d[2]));
    setText(li.children[1], d[1]);
    var box = li.children[2];
    sync(box, acks, function (k) { return k.by + '\u0000' + k.acked_at; }, function () {
      var row = h('div', 'ackline');
      row.appendChild(h('span', 'acked'));
      row.appendChild(h('span', 'note'));
      return row;
    }, function (row, k) {
      setText(row.children[0], 'Seen by ' + k.by + ' at ' + clock(k.acked_at));
      setText(row.children[1], k.note ? '“' + k.note + '”' : '');
    });
    var btn = li.children[3];
    show(btn, kind !== 'device' && !!a.alert_id);
    setText(btn, acks.length ? 'Seen too' : 'Mark seen');
  }

  function renderFeed() {
    var items = feed();
    sync($('alerts'), items, feedKey, makeAlert, updateAlert);
    var open = items.filter(function (a) { return kindOf(a) !== 'device' && acksOf(a).length === 0; }).length;
    setText($('alerts-open'), open ? open + ' not seen' : '');
    show($('alerts-empty'), items.length === 0);
  }

  // ---- players, pitch, crowd, devices, gateway -----------------------------

  function devKey(sensor, id) { return sensor + '/' + id; }

  function isSilent(sensor, d) {
    var k = devKey(sensor, d.device_id);
    return deviceNow.has(k) ? deviceNow.get(k) : !!d.silent;
  }

  function makePlayer() {
    var el = h('div', 'player');
    var name = el.appendChild(h('div', 'name'));
    name.appendChild(h('span', 'pname'));
    name.appendChild(h('span', 'pid'));
    var hr = el.appendChild(h('div', 'hr'));
    hr.appendChild(h('span', 'value'));
    hr.appendChild(h('span', 'unit', ' bpm'));
    el.appendChild(h('div', 'since'));
    el.appendChild(h('div', 'zone'));
    el.appendChild(h('div', 'load'));
    var bar = el.appendChild(h('div', 'bar'));
    bar.appendChild(h('span', 'fill'));
    el.appendChild(h('div', 'run'));
    var badges = el.appendChild(h('div', 'badges'));
    badges.appendChild(h('span', 'badge silent-tag'));
    badges.appendChild(h('span', 'badge alert-count'));
    badges.appendChild(h('span', 'badge fatigue'));
    return el;
  }

  function updatePlayer(el, p) {
    var silent = isSilent('wearable', p);
    el.dataset.playerId = p.player_id;
    el.dataset.deviceId = p.device_id || '';
    setClass(el, 'silent', silent);
    setClass(el, 'alerting', p.open_alerts > 0);
    setClass(el, 'tired', !!p.fatigue);
    setText(el.querySelector('.pname'), p.player_name || 'Player');
    setText(el.querySelector('.pid'), '#' + p.player_id);
    setText(el.querySelector('.hr .value'), num(p.heart_rate, 0));
    setSince(el.querySelector('.since'), p.seconds_since);
    var b = el.querySelector('.badges').children;
    setText(b[0], silent ? 'SILENT' : '');
    show(b[0], silent);
    setText(b[1], p.open_alerts > 0 ? p.open_alerts + (p.open_alerts === 1 ? ' alert' : ' alerts') : '');
    show(b[1], p.open_alerts > 0);
    setText(b[2], p.fatigue ? 'FATIGUE' : '');
    show(b[2], !!p.fatigue);
    updateLoad(el, p.load);
  }

  // A player's load (SPEC §11): the zone now in words and colour, the
  // match's load against the target, sprints and distance.
  function updateLoad(el, l) {
    var zone = el.querySelector('.zone'), load = el.querySelector('.load');
    var bar = el.querySelector('.bar'), run = el.querySelector('.run');
    show(zone, !!l); show(load, !!l); show(run, !!l);
    show(bar, !!(l && l.target_pct != null));
    if (!l) return;
    var z = l.zone;
    zone.className = 'zone z' + (z == null ? 'none' : z);
    setText(zone, z == null ? 'Zone —' : z === 0 ? 'Below zone 1' :
      'Zone ' + z + ' · ' + l.zone_name + (l.hr_pct != null ? ' · ' + num(l.hr_pct, 0) + '\u00a0%' : ''));
    setText(load, 'Load ' + num(l.trimp, 0) + (l.target_trimp != null ?
      ' of ' + num(l.target_trimp, 0) + ' (' + num(l.target_pct, 0) + '\u00a0%)' : ''));
    if (l.target_pct != null) {
      var fill = bar.firstChild;
      fill.style.width = Math.min(100, l.target_pct) + '%';
      setClass(bar, 'over', l.target_pct >= 100);
    }
    setText(run, l.sprints + (l.sprints === 1 ? ' sprint' : ' sprints') + ' · ' +
      num(l.distance_m / 1000, 1) + '\u00a0km · HSR ' + num(l.hsr_distance_m, 0) + '\u00a0m');
  }

  var SORTS = {
    id: function (p) { return p.player_id; },
    name: function (p) { return (p.player_name || '\uffff').toLowerCase(); },
    zone: function (p) { return -(p.load && p.load.zone != null ? p.load.zone * 1000 + (p.load.hr_pct || 0) : -1); },
    load: function (p) { return -(p.load ? p.load.trimp : -1); },
    sprints: function (p) { return -(p.load ? p.load.sprints : -1); }
  };

  function sortedPlayers() {
    var key = SORTS[$('player-sort').value] || SORTS.id;
    return (state.players || []).slice().sort(function (a, b) {
      var x = key(a), y = key(b);
      return x < y ? -1 : x > y ? 1 : a.player_id - b.player_id;
    });
  }

  // ---- a player's last minutes ---------------------------------------------

  var detailFor = null;

  function openPlayer(id) {
    detailFor = id;
    renderDetail();
    show($('player-panel'), true);
    $('pd-close').focus();
  }

  function closePlayer() {
    detailFor = null;
    show($('player-panel'), false);
  }

  // The detail comes from GET /api/players/{id} (the state event carries
  // only the cards), asked again with each state while it is open.
  var detailAsked = false;

  function renderDetail() {
    if (detailFor == null || !state || detailAsked) return;
    detailAsked = true;
    var id = detailFor;
    fetch('/api/players/' + id).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (d) {
      if (detailFor === id) fillDetail(id, d);
    }, function () { /* offline: the next state asks again */ }).then(function () { detailAsked = false; });
  }

  function fillDetail(id, d) {
    var p = (state.players || []).filter(function (q) { return q.player_id === id; })[0] || { player_id: id };
    var l = d && d.load;
    setText($('pd-name'), (p.player_name || (d && d.player_name) || 'Player') + ' #' + id + (l && l.position ? ' · ' + l.position : ''));
    var card = $('players').querySelector('[data-player-id="' + id + '"]');
    setText($('pd-now'), l && card ? card.querySelector('.zone').textContent + ' · ' + card.querySelector('.load').textContent : 'No load yet.');
    var rows = d ? d.recent : [];
    sync($('pd-recent'), rows, function (w) { return w.window_start; }, function () {
      var tr = h('tr');
      for (var i = 0; i < 6; i++) tr.appendChild(h('td'));
      return tr;
    }, function (tr, w) {
      var c = tr.children;
      setText(c[0], clock(w.window_start));
      setText(c[1], w.zone_s.map(function (s) { return num(s, 0); }).join(' · '));
      setText(c[2], num(w.trimp, 1));
      setText(c[3], num(w.distance_m, 0));
      setText(c[4], num(w.hsr_distance_m, 0) + '\u00a0m');
      setText(c[5], String(w.sprints));
    });
    show($('pd-empty'), rows.length === 0);
  }

  function makeTile(cls, rows) {
    return function () {
      var el = h('div', 'tile ' + cls);
      el.appendChild(h('div', 'tname'));
      for (var i = 0; i < rows; i++) {
        var line = el.appendChild(h('div', 'big v' + i));
        line.appendChild(h('span', 'value'));
        line.appendChild(h('span', 'unit'));
      }
      el.appendChild(h('div', 'since'));
      el.appendChild(h('div', 'badge silent-tag'));
      return el;
    };
  }

  function updateTile(el, sensor, title, lines, d) {
    var silent = isSilent(sensor, d);
    el.dataset.deviceId = d.device_id;
    setClass(el, 'silent', silent);
    setText(el.children[0], title);
    for (var i = 0; i < lines.length; i++) {
      setText(el.children[1 + i].firstChild, lines[i][0]);
      setText(el.children[1 + i].lastChild, ' ' + lines[i][1]);
    }
    setSince(el.children[1 + lines.length], d.seconds_since != null ? d.seconds_since : secondsFrom(d.last_seen));
    var tag = el.children[2 + lines.length];
    setText(tag, silent ? 'SILENT' : '');
    show(tag, silent);
  }

  function secondsFrom(iso) {
    var t = parseTime(iso), now = parseTime(state && state.now);
    return t && now ? (now - t) / 1000 : null;
  }

  function renderPitch() {
    sync($('pitch'), state.pitch || [], function (d) { return d.device_id; }, makeTile('pitchdev', 2), function (el, d) {
      updateTile(el, 'pitch', d.device_id, [[num(d.ball_speed, 1), 'km/h'], [num(d.spin_rate, 0), 'rpm']], d);
    });
  }

  function renderCrowd() {
    sync($('crowd'), state.crowd || [], function (d) { return d.zone_id + '/' + d.device_id; }, makeTile('zone', 2), function (el, d) {
      el.dataset.zoneId = d.zone_id || '';
      updateTile(el, 'crowd', d.zone_id ? 'Zone ' + d.zone_id : d.device_id, [[num(d.decibels, 1), 'dB'], [num(d.density, 2), 'per m²']], d);
    });
  }

  function makeDevice() {
    var tr = h('tr', 'device');
    for (var i = 0; i < 4; i++) tr.appendChild(h('td'));
    tr.children[0].className = 'status';
    tr.children[3].className = 'since';
    return tr;
  }

  function updateDevice(tr, d) {
    var silent = isSilent(d.sensor, d);
    tr.dataset.deviceId = d.device_id;
    setClass(tr, 'silent', silent);
    setText(tr.children[0], silent ? 'SILENT' : 'OK');
    setText(tr.children[1], d.sensor + ' ' + d.device_id);
    var where = d.player_id != null ? who({ player_id: d.player_id }) : d.zone_id ? 'Zone ' + d.zone_id : '';
    setText(tr.children[2], where);
    setSince(tr.children[3], d.seconds_since);
  }

  function renderDevices() {
    // Silent first (a device event may have changed one since the doc), else the gateway's order.
    var flagged = (state.devices || []).map(function (d, i) { return [!isSilent(d.sensor, d), i, d]; });
    flagged.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
    var all = flagged.map(function (x) { return x[2]; });
    var silent = flagged.filter(function (x) { return !x[0]; }).length;
    var shown = all.slice(0, DEVICES_SHOWN);
    sync($('devices'), shown, function (d) { return devKey(d.sensor, d.device_id); }, makeDevice, updateDevice);
    setText($('devices-summary'), all.length + ' tracked' + (silent ? ', ' + silent + ' SILENT' : ', all sending'));
    setClass($('devices-summary'), 'bad', silent > 0);
    show($('devices-more'), all.length > shown.length);
    setText($('devices-more'), all.length > shown.length ? (all.length - shown.length) + ' more devices not listed.' : '');
  }

  function renderGateway() {
    var g = state.gateway || {}, hl = state.health || {};
    var lag = g.watermark_lag_s || {}, lags = [];
    Object.keys(lag).forEach(function (k) { if (lag[k] != null) lags.push(k + ' ' + num(lag[k], 1) + ' s'); });
    var rows = [
      ['Sources', g.sources_down ? g.sources_down + ' DOWN' : 'all up', g.sources_down > 0],
      ['Input', num(g.input_rows_per_second, 0) + ' readings/s', false],
      ['Spool', (g.spool_files == null ? '—' : g.spool_files) + ' files, ' + bytes(g.spool_bytes) + ' waiting', false],
      ['Uploads', (g.uploaded_files == null ? '—' : g.uploaded_files) + ' done' +
        (g.upload_failures ? ', ' + g.upload_failures + ' FAILED attempts' : ''), g.upload_failures > 0],
      ['Last upload', g.last_upload_at ? clock(g.last_upload_at) : 'none yet', false],
      ['Watermark lag', lags.length ? lags.join(' · ') : '—', false],
      ['Clock', g.clock_synchronized === false
        ? 'NOT SYNCHRONISED: times judged by what two devices agree on (' + (g.clock_unvouched_events || 0) + ' refused)'
        : 'synchronised', g.clock_synchronized === false],
      ['Device health', hl.paused ? 'PAUSED' : 'silent after ' + num(hl.silent_after_s, 0) + ' s', !!hl.paused]
    ];
    sync($('gateway'), rows, function (r) { return r[0]; }, function () {
      var div = h('div', 'kv');
      div.appendChild(h('dt'));
      div.appendChild(h('dd'));
      return div;
    }, function (div, r) {
      setText(div.children[0], r[0]);
      setText(div.children[1], r[1]);
      setClass(div, 'bad', r[2]);
    });
  }

  function renderPlayers() {
    var ps = sortedPlayers();
    sync($('players'), ps, function (p) { return String(p.player_id); }, makePlayer, updatePlayer);
    show($('players-empty'), ps.length === 0);
    renderDetail();
  }

  function setPaused(paused) {
    var b = $('pause');
    b.disabled = false;
    setText(b, paused ? 'Resume health' : 'Pause health');
    setClass(b, 'paused', paused);
    show($('paused-banner'), paused);
    if (state && state.health) state.health.paused = paused;
  }

  function render() {
    if (!state) return;
    setText($('venue'), state.venue_id + ' · ' + state.gateway_id);
    renderFeed();
    renderPlayers();
    renderPitch();
    renderCrowd();
    renderDevices();
    renderGateway();
    setPaused(!!(state.health && state.health.paused));
  }

  function applyState(doc) {
    state = doc;
    stateAt = performance.now();
    deviceNow.clear();
    render();
  }

  // ---- live events ---------------------------------------------------------

  function setConn(on) {
    live = on;
    var c = $('conn');
    setText(c, on ? 'live' : 'reconnecting…');
    setClass(c, 'up', on);
    setClass(c, 'down', !on);
  }

  function problem(text) {
    setText($('problem'), text || '');
    show($('problem'), !!text);
  }

  function onAlert(kind) {
    return function (e) {
      var a = JSON.parse(e.data);
      if (!a.kind) a.kind = kind;
      if (!a.acks) a.acks = [];
      var k = feedKey(a);
      remember(k);
      localItems.set(k, a);
      if (kind === 'device') deviceNow.set(devKey(a.sensor, a.device_id), a.event === 'silent');
      if (state) { renderFeed(); if (kind === 'device') { renderPlayers(); renderPitch(); renderCrowd(); renderDevices(); } }
    };
  }

  function addAck(k) {
    var list = localAcks.get(k.alert_id) || [];
    list.push(k);
    localAcks.set(k.alert_id, list.slice(-20));
    if (localAcks.size > FEED_MAX) localAcks.delete(localAcks.keys().next().value);
    if (state) renderFeed();
  }

  function connect() {
    clearTimeout(retryTimer);
    if (source) source.close();
    lastMessage = Date.now();
    var es = source = new EventSource('/api/events');
    es.onopen = function () { retryMs = 1000; refusals = 0; lastMessage = Date.now(); setConn(true); problem(''); };
    es.onerror = function () {
      setConn(false);
      if (es.readyState !== EventSource.CLOSED) return;
      if (++refusals >= 2 && state) problem('The gateway refuses live updates (too many consoles open?): close one; this page keeps trying.');
      retryLater();
    };
    function heard(fn) {
      return function (e) { lastMessage = Date.now(); if (!live) setConn(true); fn(e); };
    }
    es.addEventListener('state', heard(function (e) { applyState(JSON.parse(e.data)); }));
    es.addEventListener('alert', heard(onAlert('anomaly')));
    es.addEventListener('fatigue', heard(onAlert('fatigue')));
    es.addEventListener('load', heard(onAlert('load')));
    es.addEventListener('device', heard(onAlert('device')));
    es.addEventListener('ack', heard(function (e) { addAck(JSON.parse(e.data)); }));
    es.addEventListener('health', heard(function (e) { setPaused(!!JSON.parse(e.data).paused); }));
  }

  // The event stream was refused (gateway restarting, too many consoles, or
  // not signed in): find out which, and try again with backoff.
  function retryLater() {
    if (source) { source.close(); source = null; }
    clearTimeout(retryTimer);
    retryTimer = setTimeout(function () {
      load().then(connect, function () { retryLater(); });
    }, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  }

  function load() {
    return fetch('/api/state', { cache: 'no-store' }).then(function (r) {
      if (r.status === 401) {
        problem('Not signed in: open the console with the link that carries ?token=… (ask whoever runs the gateway).');
        throw new Error('unauthorized');
      }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (doc) { if (refusals < 2) problem(''); applyState(doc); }, function (err) {
      setConn(false);
      throw err;
    });
  }

  setInterval(function () {
    if (stateAt) {
      var els = document.querySelectorAll('.since[data-since]');
      for (var i = 0; i < els.length; i++) setText(els[i], ago(sinceNow(parseFloat(els[i].dataset.since))));
    }
    if (source && live && Date.now() - lastMessage > STALE_MS) { setConn(false); connect(); }
  }, 500);

  // ---- ack form and pause button -------------------------------------------

  function openAck(a) {
    ackFor = a;
    var d = describe(a);
    setText($('ack-about'), d[0] + ' · ' + who(a) + ' · ' + d[1]);
    var by = $('ack-by');
    try { by.value = localStorage.getItem(NAME_KEY) || by.value; } catch (e) { /* storage off: type it */ }
    $('ack-note').value = '';
    show($('ack-error'), false);
    show($('ack-panel'), true);
    (by.value ? $('ack-note') : by).focus();
  }

  function closeAck() {
    ackFor = null;
    show($('ack-panel'), false);
  }

  function ackError(text) {
    setText($('ack-error'), text);
    show($('ack-error'), true);
  }

  $('ack-form').addEventListener('submit', function (e) {
    e.preventDefault();
    if (!ackFor) return;
    var by = $('ack-by').value.trim(), note = $('ack-note').value.trim(), id = ackFor.alert_id;
    if (!by) { ackError('Type your name, so others know who has seen it.'); return; }
    try { localStorage.setItem(NAME_KEY, by); } catch (err) { /* storage off */ }
    var send = $('ack-send');
    send.disabled = true;
    fetch('/api/alerts/' + encodeURIComponent(id) + '/ack', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(note ? { by: by, note: note } : { by: by })
    }).then(function (r) {
      return r.text().then(function (body) {
        if (!r.ok) throw new Error(r.status === 401 ? 'Not signed in (401): reopen the console link.' : 'Not saved: ' + (body || 'HTTP ' + r.status));
        var k = JSON.parse(body);
        if (!k.alert_id) k.alert_id = id;
        addAck(k);
        closeAck();
      });
    }).catch(function (err) {
      ackError(err.message.indexOf('Not ') === 0 ? err.message : 'Not saved, the gateway did not answer: try again.');
    }).then(function () { send.disabled = false; });
  });

  $('player-sort').addEventListener('change', function () { if (state) renderPlayers(); });
  $('players').addEventListener('click', function (e) {
    var card = e.target.closest('.player');
    if (card) openPlayer(Number(card.dataset.playerId));
  });
  $('pd-close').addEventListener('click', closePlayer);
  $('player-panel').addEventListener('click', function (e) { if (e.target === $('player-panel')) closePlayer(); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape' && detailFor != null) closePlayer(); });

  $('ack-cancel').addEventListener('click', closeAck);
  $('ack-panel').addEventListener('click', function (e) { if (e.target === $('ack-panel')) closeAck(); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape' && ackFor) closeAck(); });

  $('pause').addEventListener('click', function () {
    var b = $('pause'), paused = !!(state && state.health && state.health.paused);
    b.disabled = true;
    fetch('/api/health/' + (paused ? 'resume' : 'pause'), { method: 'POST' }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (j) { setPaused(!!j.paused); problem(''); }, function (err) {
      b.disabled = false;
      problem('Could not ' + (paused ? 'resume' : 'pause') + ' device health (' + err.message + '): try again.');
    });
  });

  load().then(connect, function () { retryLater(); });
})();
