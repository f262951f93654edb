use anyhow::Result;
use ken_engine::Engine;

use crate::args::EmbedArgs;
use crate::output::Output;
use crate::wire;

pub fn run(engine: &Engine, a: EmbedArgs, out: &Output) -> Result<i32> {
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let (model, dim, vectors) = engine.embed(&texts, a.query)?;
    if out.json {
        out.print(&wire::Embedded {
            model,
            dim,
            vectors,
        });
    } else {
        outln!("model {model} · {dim} dimensions");
        for (t, v) in a.texts.iter().zip(&vectors) {
            let head: Vec<String> = v.iter().take(5).map(|x| format!("{x:.4}")).collect();
            outln!("{:?}: [{}, …]", t, head.join(", "));
        }
    }
    Ok(0)
}
