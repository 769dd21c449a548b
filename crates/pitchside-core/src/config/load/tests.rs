use super::*;

fn section(text: &str) -> LoadSection {
    toml::from_str(text).unwrap()
}

fn roster_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pitchside-load-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("roster.csv");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_declared_defaults_validate() {
    let c = LoadConfig::default();
    assert_eq!(c.zones, [50.0, 60.0, 70.0, 80.0, 90.0]);
    assert_eq!((c.max_gap, c.sprint_dwell), (5_000_000, 1_000_000));
    assert!(c.roster.is_empty());
    assert!(!c.profile(7).on_roster);
}

#[test]
fn a_players_figures_come_from_the_roster_then_the_position_then_the_defaults() {
    let path = roster_file(
        "resolve",
        "# squad, 2026\nplayer_id,name,position,hr_max,hsr_speed,target_trimp\n\
         7,\"Sharma, R.\",bowler,185,,300\n9,Osei,keeper,,4.5,\n11,Li,,,,\n",
    );
    let s = section(&format!(
        "roster = {:?}\n[[positions]]\nname = \"keeper\"\nhsr_speed = 5.0\nsprint_speed = 6.0\n\
         [[positions]]\nname = \"bowler\"\nsprint_speed = 7.5\n",
        path.display().to_string()
    ));
    let c = s.validate().unwrap();
    let p7 = c.profile(7);
    assert_eq!(p7.name.as_deref(), Some("Sharma, R."));
    assert_eq!(
        (p7.hr_max, p7.hsr_speed, p7.sprint_speed),
        (185.0, 5.5, 7.5)
    );
    assert_eq!(p7.target_trimp, Some(300.0));
    let p9 = c.profile(9);
    assert_eq!(
        (p9.hr_max, p9.hsr_speed, p9.sprint_speed),
        (190.0, 4.5, 6.0)
    );
    let p11 = c.profile(11);
    assert!(p11.on_roster && p11.position.is_none());
    assert_eq!(p11.sprint_speed, 7.0);
    assert!(!c.profile(12).on_roster);
}

#[test]
fn every_roster_problem_names_its_line_and_column() {
    let path = roster_file("bad", "player_id,name,hr_max,colour\n7,A,185,red\n");
    let e = section(&format!("roster = {:?}", path.display().to_string()))
        .validate()
        .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("line 1 (the header): unknown column \"colour\""),
        "{e:?}"
    );

    let text =
        "player_id,hr_max,hr_rest\nseven,180,50\n8,300,50\n9,180,\n9,180,\n10,150,160\n11,\"18\n";
    let path = roster_file("bad2", text);
    let e = section(&format!("roster = {:?}", path.display().to_string()))
        .validate()
        .unwrap_err();
    let want = [
        "line 2: player_id must be a whole number",
        "line 3: hr_max \"300\" must be a number from 100 to 250",
        "line 5: player_id is on the roster twice",
        "line 6: hr_rest \"160\" must be a number from 20 to 150",
        "line 7: not CSV",
    ];
    for w in want {
        assert!(e.iter().any(|p| p.contains(w)), "{w}: {e:#?}");
    }
    assert_eq!(e.len(), 5, "{e:#?}");
}

#[test]
fn a_roster_players_resting_rate_must_be_below_their_hrmax() {
    let path = roster_file("rest", "player_id,hr_max,hr_rest\n10,150,149\n11,150,150\n");
    let e = section(&format!("roster = {:?}", path.display().to_string()))
        .validate()
        .unwrap_err();
    assert_eq!(
        e,
        ["load.roster: player 11: hr_rest 150 must be below hr_max 150"]
    );
}

#[test]
fn a_missing_or_huge_roster_is_refused_with_what_to_do() {
    let e = section("roster = \"/nonexistent/roster.csv\"")
        .validate()
        .unwrap_err();
    assert!(
        e[0].starts_with("load.roster: cannot read /nonexistent/roster.csv"),
        "{e:?}"
    );
    assert!(e[0].contains("absolute"), "{e:?}");
    let e = section("roster = \"/dev/zero\"").validate().unwrap_err();
    assert!(e[0].contains("larger than 4 MiB"), "{e:?}");
}

#[test]
fn zones_and_speeds_are_checked() {
    let e =
        section("zones = [50, 40, 70, 80, 90]\nhsr_speed = 8\nsprint_speed = 7\nmax_gap = \"0s\"")
            .validate()
            .unwrap_err();
    let keys: Vec<&str> = e.iter().map(|p| p.split(':').next().unwrap()).collect();
    assert_eq!(
        keys,
        ["load.max_gap", "load.zones", "load.sprint_speed"],
        "{e:#?}"
    );
}

#[test]
fn a_rule_naming_a_player_by_a_fraction_is_a_problem_with_its_key() {
    let text = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n\
                [[load.rules]]\nname = \"r\"\nwatch = \"sprints\"\nat_least = 3\nplayers = [7.5]\n";
    match crate::config::parse(text, "test") {
        Err(crate::config::ConfigError::Invalid { problems }) => assert!(
            problems[0].starts_with("load.rules[0].players: must be a list of whole numbers"),
            "{problems:?}"
        ),
        other => panic!("{other:?}"),
    }
}
