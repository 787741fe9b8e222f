//! The `mancala` binary as a user runs it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::{Value, json};

fn mancala(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mancala"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

#[test]
fn replay_of_no_moves_prints_the_start() {
    let output = mancala(&["replay", "--variant", "kalah", "--moves", ""]);
    assert!(output.status.success());
    assert_eq!(
        json_of(&output),
        json!({"variant": "kalah", "to_move": 0, "over": false,
               "pits": [[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]],
               "score": [0, 0], "result": null})
    );
}

#[test]
fn replay_applies_extra_turns_and_options() {
    let output = mancala(&["replay", "--variant", "kalah", "--moves", "3,6"]);
    assert_eq!(
        json_of(&output),
        json!({"variant": "kalah", "to_move": 1, "over": false,
               "pits": [[4, 4, 0, 5, 5, 0], [5, 5, 5, 5, 4, 4]],
               "score": [2, 0], "result": null})
    );
    let small = mancala(&[
        "replay",
        "--variant",
        "kalah",
        "--pits",
        "1",
        "--seeds",
        "1",
        "--moves",
        "1",
    ]);
    assert_eq!(
        json_of(&small),
        json!({"variant": "kalah", "to_move": 0, "over": true, "pits": [[0], [0]],
               "score": [1, 1], "result": "draw"})
    );
}

#[test]
fn replay_of_oware_and_mangala() {
    let oware = json_of(&mancala(&["replay", "--variant", "oware", "--moves", "6"]));
    assert_eq!(
        oware["pits"],
        json!([[4, 4, 4, 4, 4, 0], [5, 5, 5, 5, 4, 4]])
    );
    assert_eq!(oware["to_move"], 1);
    let mangala = json_of(&mancala(&[
        "replay",
        "--variant",
        "mangala",
        "--moves",
        "1",
    ]));
    assert_eq!(
        mangala["pits"],
        json!([[0, 7, 7, 7, 7, 7], [7, 6, 6, 6, 6, 6]])
    );
}

#[test]
fn an_illegal_move_exits_2_naming_the_ply_and_the_reason() {
    let output = mancala(&["replay", "--variant", "kalah", "--moves", "3,3"]);
    assert_eq!(output.status.code(), Some(2));
    let error = json_of(&output);
    assert_eq!(error["error"], "empty_pit");
    assert_eq!(error["ply"], 2);
    let output = mancala(&["replay", "--variant", "kalah", "--moves", "1,9"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(json_of(&output)["error"], "pit_out_of_range");
    let output = mancala(&["replay", "--variant", "oware", "--moves", "1,x"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(json_of(&output)["error"], "invalid_move");
    assert_eq!(json_of(&output)["ply"], 2);
}

#[test]
fn bad_flags_are_usage_errors_not_panics() {
    for args in [
        &["replay", "--variant", "oware", "--seeds", "5"][..],
        &["replay", "--variant", "kalah", "--seeds", "9"],
        &["replay", "--variant", "chess"],
        &["perft", "--variant", "kalah"],
    ] {
        let output = mancala(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.is_empty(), "{args:?} explains itself");
    }
}

#[test]
fn perft_prints_the_count_and_json_with_the_rate() {
    let output = mancala(&["perft", "--variant", "kalah", "--depth", "4"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "942");
    let report = json_of(&mancala(&[
        "perft",
        "--variant",
        "mangala",
        "--depth",
        "3",
        "--json",
    ]));
    assert_eq!(report["nodes"], 206);
    assert!(report["nodes_per_second"].is_number());
}

#[test]
fn help_describes_every_command() {
    let output = mancala(&["--help"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("replay") && text.contains("perft"));
    let output = mancala(&["replay", "--help"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("--empty-capture"));
}

/// `mancala solve` on the 3x3 Kalah board, with extra flags.
fn solve_3x3(extra: &[&str]) -> Output {
    let mut args = vec![
        "solve",
        "--variant",
        "kalah",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--json",
    ];
    args.extend_from_slice(extra);
    mancala(&args)
}

#[test]
fn solve_prints_the_value_and_every_best_move() {
    let output = solve_3x3(&[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let solution = json_of(&output);
    assert_eq!(solution["value"], 2);
    assert_eq!(solution["best"], json!([1, 2]));
    assert!(solution["nodes"].as_u64().unwrap() > 0);
    assert!(solution["seconds"].is_number());
    // The same with the endgame table off, and from a later position.
    assert_eq!(json_of(&solve_3x3(&["--endgame-stones", "0"]))["value"], 2);
    assert!(solve_3x3(&["--moves", "1"]).status.success());
    let output = mancala(&["solve", "--variant", "oware"]);
    assert_eq!(output.status.code(), Some(2), "only kalah is solved");
}

#[test]
fn an_endgame_table_built_into_a_file_is_checked_and_solves_with_fewer_nodes() {
    let dir = std::env::temp_dir().join(format!("mancala-endgame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("kalah-3.egtb");
    let path = file.to_str().unwrap();
    let output = mancala(&[
        "endgame", "build", "--pits", "3", "--stones", "14", "--out", path,
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = mancala(&["endgame", "check", path]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("gains agree with their moves"));

    // The 3x3 board holds 18 stones: the file's 14 answer more of the tree
    // than a table of 4 built now, for the same value.
    let from_file = json_of(&solve_3x3(&["--endgame-file", path]));
    let built = json_of(&solve_3x3(&["--endgame-stones", "4"]));
    assert_eq!(from_file["value"], 2);
    assert_eq!(from_file["best"], built["best"]);
    assert!(from_file["nodes"].as_u64() < built["nodes"].as_u64());

    // A damaged file is refused, by the solver and by the check.
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    for args in [
        vec!["endgame", "check", path],
        vec![
            "solve",
            "--variant",
            "kalah",
            "--pits",
            "3",
            "--seeds",
            "3",
            "--endgame-file",
            path,
        ],
    ] {
        let output = mancala(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("damaged"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ai_prints_a_legal_move_and_is_reproducible() {
    let args = [
        "ai",
        "--variant",
        "oware",
        "--level",
        "advanced",
        "--seed",
        "5",
        "--nodes",
        "50000",
        "--json",
    ];
    let first = json_of(&mancala(&args));
    let again = json_of(&mancala(&args));
    assert_eq!(first, again);
    let pit = first["pit"].as_u64().unwrap();
    assert!((1..=6).contains(&pit));
    assert!(first["value"].is_number());
    let output = mancala(&["ai", "--variant", "mangala", "--level", "perfect"]);
    assert_eq!(output.status.code(), Some(2), "perfect is Kalah only");
    let output = mancala(&["ai", "--variant", "kalah", "--level", "genius"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn match_reports_wins_draws_and_losses() {
    let report = json_of(&mancala(&[
        "match",
        "--variant",
        "kalah",
        "--a",
        "intermediate",
        "--b",
        "random",
        "--games",
        "6",
        "--json",
    ]));
    let games = report["a_wins"].as_u64().unwrap()
        + report["draws"].as_u64().unwrap()
        + report["b_wins"].as_u64().unwrap();
    assert_eq!(games, 6);
    let score = report["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score));
    let text = mancala(&[
        "match",
        "--variant",
        "mangala",
        "--a",
        "beginner",
        "--b",
        "random",
        "--games",
        "2",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("rating difference"), "{text}");
}
