//! The settings each binary declares, written to `deploy/settings.tsv`:
//! the list the deployment checks read (`deploy/check_deploy.py`) and the
//! configuration page must cover. Regenerate after changing a setting:
//! `UPDATE_SETTINGS=1 cargo test -p mancala-arena --test settings`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use mancala_platform::cli::Declaration;

fn declarations() -> [(&'static str, Declaration); 4] {
    [
        ("arena", mancala_arena::declaration()),
        ("matchmaking", mancala_matchmaking::declaration()),
        ("game-room", mancala_game_room::declaration()),
        ("rating", mancala_rating::declaration()),
    ]
}

fn rendered() -> String {
    let mut text = String::from(
        "# Every setting each binary reads, from their declarations.\n\
         # Generated: UPDATE_SETTINGS=1 cargo test -p mancala-arena --test settings\n\
         # binary\tvariable\tflag\tdefault\thelp\n",
    );
    for (binary, declaration) in declarations() {
        for setting in declaration.settings() {
            // Defaults made on this machine (its cores) are not the file's.
            let default = if setting.name == "APP_AI_WORKERS" {
                "(cores)".to_owned()
            } else {
                setting.default
            };
            text.push_str(&format!(
                "{binary}\t{}\t{}\t{default}\t{}\n",
                setting.name, setting.flag, setting.help
            ));
        }
    }
    text
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

#[test]
fn the_committed_list_is_the_declared_one() {
    let path = root().join("deploy/settings.tsv");
    let text = rendered();
    if std::env::var_os("UPDATE_SETTINGS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "deploy/settings.tsv is stale: UPDATE_SETTINGS=1 cargo test -p mancala-arena --test settings"
    );
}

#[test]
fn the_configuration_page_covers_every_setting() {
    let page = std::fs::read_to_string(root().join("docs/CONFIGURATION.md")).unwrap();
    let missing: Vec<String> = declarations()
        .into_iter()
        .flat_map(|(_, declaration)| declaration.settings())
        .map(|setting| setting.name)
        .filter(|name| !page.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/CONFIGURATION.md lacks {missing:?}"
    );
}

#[test]
fn every_binary_declares_its_settings_once() {
    // Declaration::with panics on two settings with one id or flag; this
    // builds every binary's, which also makes clap check its own rules.
    for (_, declaration) in declarations() {
        let names: Vec<String> = declaration.settings().into_iter().map(|s| s.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }
}
