use anyhow::Result;
use ken_engine::Engine;
use ken_engine::Scope;
use ken_engine::format_date;

use crate::args::TokenCommand;
use crate::output::Output;
use crate::wire;

pub fn run(engine: &Engine, cmd: TokenCommand, out: &Output) -> Result<i32> {
    match cmd {
        TokenCommand::Create {
            repos,
            scope,
            label,
        } => {
            let scope = Scope::parse(&scope)?;
            let t = engine.create_token(&repos, scope, label)?;
            if out.json {
                out.print(&wire::NewToken {
                    token: t.token,
                    id: t.id,
                });
            } else {
                outln!("{}", t.token);
                eprintln!(
                    "{} token {} ({} on {}) — shown once: keep it now; it is stored only as a hash",
                    out.green("✓"),
                    t.id,
                    scope.name(),
                    repos.join(", ")
                );
            }
        }
        TokenCommand::List => {
            let tokens = engine.list_tokens()?;
            if out.json {
                out.print_value(&serde_json::json!({ "tokens": tokens }));
                return Ok(0);
            }
            if tokens.is_empty() {
                outln!("no tokens: create one with `ken token create --repo NAME --scope read`");
            }
            for t in tokens {
                let state = match t.revoked_at {
                    Some(at) => format!("revoked {}", format_date(at)),
                    None => t
                        .last_used_at
                        .map(|u| format!("last used {}", format_date(u)))
                        .unwrap_or_else(|| "never used".into()),
                };
                outln!(
                    "{}  {:<6} {}  {}{}",
                    out.bold(&t.id),
                    t.scope,
                    t.repos.join(","),
                    out.dim(&format!("created {} · {state}", format_date(t.created_at))),
                    t.label.map(|l| format!("  {l}")).unwrap_or_default()
                );
            }
        }
        TokenCommand::Revoke { id } => {
            engine.revoke_token(&id)?;
            if out.json {
                out.print_value(&serde_json::json!({ "revoked": id }));
            } else {
                outln!("{} {id} revoked", out.green("✓"));
            }
        }
    }
    Ok(0)
}
