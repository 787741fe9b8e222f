//! The command line every service binary shares: settings come from the
//! environment, and `--bind` overrides `APP_BIND` so an operator (or a
//! test) can place several instances on one machine.

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Where to listen, HOST:PORT (overrides APP_BIND).
    #[arg(long)]
    bind: Option<String>,
}

/// The process's environment with the command line applied, for the
/// settings' `from_vars`. Exits with usage on a bad command line.
pub fn environment(about: &'static str) -> Vec<(String, String)> {
    let command = <Args as clap::CommandFactory>::command().about(about);
    let args = match <Args as clap::FromArgMatches>::from_arg_matches(&command.get_matches()) {
        Ok(args) => args,
        Err(error) => error.exit(),
    };
    with_bind(std::env::vars().collect(), args.bind)
}

fn with_bind(mut vars: Vec<(String, String)>, bind: Option<String>) -> Vec<(String, String)> {
    if let Some(bind) = bind {
        vars.retain(|(name, _)| name != "APP_BIND");
        vars.push(("APP_BIND".into(), bind));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_on_the_command_line_wins_over_the_environment() {
        let vars = vec![("APP_BIND".to_owned(), "0.0.0.0:1".to_owned())];
        let vars = with_bind(vars, Some("127.0.0.1:2".into()));
        assert_eq!(vars, [("APP_BIND".to_owned(), "127.0.0.1:2".to_owned())]);
        let unchanged = with_bind(vars.clone(), None);
        assert_eq!(unchanged, vars);
    }
}
