//! Print the syntax tree of a file (named nodes, with field names), for
//! writing language specs: `cargo run -p ken-syntax --example tree_dump -- FILE [MAX_DEPTH]`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: tree_dump FILE [MAX_DEPTH]");
        std::process::exit(2);
    };
    let max_depth: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(12);
    let text = std::fs::read_to_string(path).expect("read file");
    let lang = ken_core::Language::from_path(path);
    let Some(ts) = ken_syntax::tree_sitter_language(lang) else {
        eprintln!("no grammar for {lang}");
        std::process::exit(1);
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&ts).expect("grammar version");
    let tree = parser.parse(&text, None).expect("parse");
    let mut cursor = tree.walk();
    let mut depth = 0usize;
    loop {
        let node = cursor.node();
        if node.is_named() && depth <= max_depth {
            let field = cursor
                .field_name()
                .map(|f| format!("{f}: "))
                .unwrap_or_default();
            let snippet: String = node
                .utf8_text(text.as_bytes())
                .unwrap_or("")
                .chars()
                .take(40)
                .collect::<String>()
                .replace('\n', "⏎");
            println!(
                "{}{field}{} [{}-{}] {snippet:?}",
                "  ".repeat(depth),
                node.kind(),
                node.start_position().row + 1,
                node.end_position().row + 1
            );
        }
        if depth < max_depth && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}
