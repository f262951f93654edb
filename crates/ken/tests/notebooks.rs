//! Jupyter notebooks: judged by their code cells, never by their outputs;
//! hits and citations say which cell they are in; the stored text (what the
//! file view and the model see) is the code view the line numbers count.

mod common;

use common::server::{Server, token};
use common::*;
use serde_json::{Value, json};

/// A notebook: a markdown cell, then each code cell with `outputs`.
fn notebook(cells: &[(&str, Value)]) -> String {
    let mut all = vec![json!({
        "cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n"]
    })];
    for (code, outputs) in cells {
        all.push(json!({
            "cell_type": "code", "execution_count": 1, "metadata": {},
            "source": code.lines().map(|l| format!("{l}\n")).collect::<Vec<_>>(),
            "outputs": outputs,
        }));
    }
    serde_json::to_string_pretty(&json!({
        "cells": all,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }))
    .unwrap()
}

/// An output cell holding a PNG figure of `bytes` base64 characters, on one line.
fn figure(bytes: usize) -> Value {
    json!([{
        "output_type": "display_data", "metadata": {},
        "data": {"image/png": "iVBORw0KGgo".to_string() + &"A".repeat(bytes), "text/plain": ["<Figure>"]},
    }])
}

const LOAD: &str = "import pandas as pd\n\ndef load_rainfall(path):\n    \"\"\"Read the rainfall table.\"\"\"\n    return pd.read_csv(path)";
const PLOT: &str = "def plot_rainfall(frame):\n    frame.plot(x=\"month\", y=\"millimetres\")\n\nplot_rainfall(load_rainfall(\"rain.csv\"))";

#[test]
fn notebooks_with_figures_and_large_outputs_are_indexed_by_their_code() {
    let r = Repo::new();
    // a figure's base64 line looked minified ("generated")
    r.write(
        "analysis/figures.ipynb",
        notebook(&[(LOAD, json!([])), (PLOT, figure(300_000))]),
    );
    // outputs past --max-file-size, code well under it ("too-large")
    r.write(
        "analysis/big_outputs.ipynb",
        notebook(&[(
            "def summarize_stations(frame):\n    return frame.describe()",
            figure(40_000),
        )]),
    );
    // code cells past the limit: too large, judged on the code
    let long: String = (0..900)
        .map(|i| format!("station_{i} = load_station({i})\n"))
        .collect();
    r.write(
        "analysis/huge_code.ipynb",
        notebook(&[(long.as_str(), json!([]))]),
    );
    r.commit("notebooks");

    let ken = Ken::new();
    let rep = ken.index(&[
        r.path().to_str().unwrap(),
        "--name",
        "nb",
        "--max-file-size",
        "20000",
    ]);
    assert_eq!(rep["files"], 2, "{rep}");
    assert_eq!(rep["skipped"]["too-large"], 1, "{rep}");
    assert!(rep["skipped"].get("generated").is_none(), "{rep}");

    // a hit in the second code cell (index 2: the markdown cell is 0)
    let v = ken.search(&["plot_rainfall"]);
    let top = &v["results"][0];
    assert_eq!(top["path"], "analysis/figures.ipynb", "{v}");
    assert_eq!(top["cell"], 2, "{top}");
    // its lines count the code view: cell 1 is lines 1-5, a blank line, then cell 2
    assert_eq!(
        (top["start_line"].as_u64(), top["end_line"].as_u64()),
        (Some(7), Some(10)),
        "{top}"
    );
    let v = ken.search(&["summarize_stations"]);
    assert_eq!(v["results"][0]["path"], "analysis/big_outputs.ipynb");
    assert_eq!(v["results"][0]["cell"], 1);
    let text = stdout(&ken.run(&["search", "plot_rainfall"]));
    assert!(
        text.contains("analysis/figures.ipynb:7-10 (cell 2)"),
        "{text}"
    );

    // an offline answer cites the notebook, and the citation names the cell
    let a = ken.json(&["ask", "--json", "what does plot_rainfall do?"]);
    let cites: Vec<&Value> = a["claims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["citations"].as_array().unwrap())
        .filter(|c| c["path"] == "analysis/figures.ipynb" && c["start_line"] == 7)
        .collect();
    assert!(!cites.is_empty(), "{a}");
    assert!(cites.iter().all(|c| c["cell"] == 2), "{a}");

    // the file view shows the code view's lines, not the notebook's JSON
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[]);
    let (st, v) = s.get(
        "/api/v1/repos/nb/file?path=analysis/figures.ipynb&start=7&end=8",
        Some(&t),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        v["text"],
        "def plot_rainfall(frame):\n    frame.plot(x=\"month\", y=\"millimetres\")"
    );
}

#[test]
fn a_python_file_hit_has_no_cell() {
    let r = Repo::new();
    r.write(
        "rain.py",
        "def load_rainfall(path):\n    return open(path).read()\n",
    );
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap()]);
    let v = ken.search(&["load_rainfall"]);
    assert_eq!(v["results"][0]["path"], "rain.py");
    assert!(v["results"][0].get("cell").is_none(), "{v}");
}

/// The names of a hit's authors, largest share first.
fn author_names(hit: &Value) -> Vec<&str> {
    hit["authors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect()
}

#[test]
fn a_notebook_cells_authors_are_who_wrote_its_lines() {
    // Ada writes the loading cell; a month later Grace puts a plotting cell
    // before it. Blame counts the notebook's JSON lines, chunks its code view.
    let r = Repo::new();
    r.write("analysis/rain.ipynb", notebook(&[(LOAD, json!([]))]));
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "load the rainfall",
    );
    r.write(
        "analysis/rain.ipynb",
        notebook(&[(PLOT, json!([])), (LOAD, json!([]))]),
    );
    r.commit_as(
        "Grace Hopper",
        "grace@example.com",
        "2024-02-02T10:00:00",
        "plot the rainfall",
    );
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "nb"]);

    // cell 1 (after the markdown cell 0): Grace's, code-view lines 1-4
    let v = ken.search(&["plot_rainfall"]);
    let plot = &v["results"][0];
    assert_eq!(
        (plot["cell"].as_u64(), plot["start_line"].as_u64()),
        (Some(1), Some(1)),
        "{plot}"
    );
    assert_eq!(author_names(plot), ["Grace Hopper"], "{plot}");
    // cell 2: Ada's, code-view lines 6-10
    let v = ken.search(&["load_rainfall"]);
    let load = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["cell"] == 2)
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        (load["start_line"].as_u64(), load["end_line"].as_u64()),
        (Some(6), Some(10)),
        "{load}"
    );
    assert_eq!(author_names(load), ["Ada Lovelace"], "{load}");

    // `ken who` for the function in Grace's cell names her first
    let who = ken.json(&["who", "--json", "plot_rainfall"]);
    assert_eq!(who["people"][0]["name"], "Grace Hopper", "{who}");
}
