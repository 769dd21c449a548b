// Placeholder: helper "page" replaces this with the console page.
"use strict";
const show = (s) => { document.getElementById("state").textContent = JSON.stringify(s, null, 2); };
fetch("/api/state").then((r) => r.json()).then(show);
const es = new EventSource("/api/events");
es.onopen = () => { document.getElementById("conn").textContent = "live"; };
es.onerror = () => { document.getElementById("conn").textContent = "reconnecting…"; };
es.addEventListener("state", (e) => show(JSON.parse(e.data)));
