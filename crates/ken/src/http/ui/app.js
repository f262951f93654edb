// Kenning's pages: a small client of the public API (/api/v1), nothing more.
// The token lives in sessionStorage (never in a URL); every page's state
// lives in its URL, so results can be shared.
"use strict";

const TOKEN_KEY = "ken.token";
const main = () => document.getElementById("main");

// --- DOM helpers: text always goes through textContent ---------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function link(href, text, attrs) {
  return el("a", Object.assign({ href, "data-link": true }, attrs || {}), text);
}

function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

function fileHref(repo, path, start, end, symbol) {
  return url("/file", { repo, path, start, end, symbol });
}

function short(sha) {
  return sha ? sha.slice(0, 10) : "";
}

function age(seconds) {
  if (!seconds) return "";
  const d = (Date.now() / 1000 - seconds) / 86400;
  if (d < 1) return "today";
  if (d < 30) return `${Math.round(d)}d ago`;
  if (d < 365) return `${Math.round(d / 30)}mo ago`;
  return `${(d / 365).toFixed(1)}y ago`;
}

function setStatus(node, text, error) {
  node.textContent = text || "";
  node.classList.toggle("error", !!error);
}

// --- the API -----------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
    this.hint = body && body.error && body.error.hint;
  }
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(path, params, init) {
  const headers = Object.assign({ Authorization: `Bearer ${token()}` }, (init && init.headers) || {});
  const r = await fetch(url(path, params), Object.assign({}, init, { headers }));
  if (r.status === 401) {
    signIn("Your token was refused; sign in again.");
    throw new ApiError(401, null);
  }
  const body = (r.headers.get("content-type") || "").includes("json") ? await r.json() : await r.text();
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

function showError(node, e) {
  if (e.status === 401) return;
  setStatus(node, e.hint ? `${e.message} (${e.hint})` : e.message, true);
}

// --- routing -------------------------------------------------------------------

const pages = {
  "/": searchPage,
  "/search": searchPage,
  "/file": filePage,
  "/ask": askPage,
  "/people": peoplePage,
  "/person": personPage,
  "/impact": impactPage,
  "/repos": reposPage,
  "/report": reportPage,
  "/signin": signInPage,
};

let leave = null; // the current page's clean-up (timers, key handlers)

function navigate(href, replace) {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  render();
}

function render() {
  if (leave) leave();
  leave = null;
  const path = location.pathname;
  const page = pages[path] || notFoundPage;
  const params = new URLSearchParams(location.search);
  document.getElementById("signout").hidden = !token();
  const section = { "/": "search", "/search": "search", "/file": "search", "/person": "people" }[path] || path.slice(1);
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!token() && path !== "/signin") {
    signIn();
    return;
  }
  main().replaceChildren();
  leave = page(params) || null;
}

function signIn(message) {
  const next = location.pathname === "/signin" ? "/" : location.pathname + location.search;
  navigate(url("/signin", { next, message }), true);
}

document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a[data-link]");
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", render);
document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("signout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    navigate("/signin");
  });
  render();
});

// --- sign in -------------------------------------------------------------------

function signInPage(params) {
  const input = el("input", { type: "password", id: "token", name: "token", autocomplete: "off", required: true, "aria-describedby": "token-hint", placeholder: "ken_…" });
  const status = el("p", { class: "status", role: "status" });
  if (params.get("message")) setStatus(status, params.get("message"), true);
  const form = el("form", { class: "bar", onsubmit: async (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    const r = await fetch("/api/v1/repos", { headers: { Authorization: `Bearer ${t}` } });
    if (!r.ok) {
      setStatus(status, "That token was refused.", true);
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, t);
    navigate(params.get("next") || "/", true);
  } }, el("label", { for: "token" }, "API token"), input, el("button", { type: "submit" }, "Sign in"));
  main().append(
    el("h1", {}, "Sign in"),
    el("p", { class: "hint", id: "token-hint" }, "Use a token from `ken token create`. It stays in this tab's session storage and is never put in a URL."),
    form, status);
  input.focus();
}

// --- search ------------------------------------------------------------------

const FILTERS = ["lang", "path", "repo", "author", "since", "until", "mode"];

/// `retry lang:py path:src/** since:2w` → {q: "retry", lang: "py", ...}
function parseQuery(text) {
  const out = { q: [] };
  for (const word of text.trim().split(/\s+/)) {
    const m = word.match(/^([a-z]+):(.+)$/);
    if (m && FILTERS.includes(m[1])) {
      out[m[1]] = out[m[1]] ? `${out[m[1]]},${m[2]}` : m[2];
    } else if (word) {
      out.q.push(word);
    }
  }
  out.q = out.q.join(" ");
  return out;
}

function codeBlock(lines, htmlLines, firstLine, opts) {
  const pre = el("pre", { class: "code" });
  const code = el("code");
  lines.forEach((text, i) => {
    const n = firstLine + i;
    const row = el("span", { class: "row", "data-line": n });
    if (opts && opts.chunk && n >= opts.chunk[0] && n <= opts.chunk[1]) row.classList.add("chunk");
    if (opts && opts.gutter) row.append(opts.gutter(n));
    row.append(el("span", { class: "ln" }, String(n)));
    const body = el("span", { class: "src" });
    if (htmlLines && htmlLines[i] !== undefined) body.innerHTML = htmlLines[i]; // escaped by the server
    else body.textContent = text;
    row.append(body);
    code.append(row);
  });
  pre.append(code);
  return pre;
}

function resultItem(r) {
  const href = fileHref(r.repo, r.path, r.start_line, r.end_line, r.symbol);
  const signals = Object.entries(r.signals || {});
  const lines = r.snippet.split("\n");
  return el("li", { class: "result", "data-href": href, tabindex: "-1" },
    el("header", {},
      el("span", { class: "symbol" }, r.symbol || r.path),
      el("span", { class: "meta" }, r.kind),
      r.pinned ? el("span", { class: "pin", title: "exact symbol match" }, "★ exact") : null,
      link(href, `${r.path}:${r.start_line}-${r.end_line}`, { class: "open" }),
      el("span", { class: "meta" }, `${r.repo} @ ${short(r.commit)}`)),
    r.authors && r.authors.length
      ? el("div", { class: "meta" }, "by ", r.authors.slice(0, 3).map((a) => `${a.name} ${Math.round(a.share * 100)}%`).join(", "))
      : null,
    codeBlock(lines, r.snippet_html, r.start_line),
    el("details", { class: "why" },
      el("summary", {}, "why"),
      el("table", {},
        el("thead", {}, el("tr", {}, el("th", {}, "signal"), el("th", {}, "rank"), el("th", {}, "score"))),
        el("tbody", {}, signals.map(([k, s]) => el("tr", {}, el("td", {}, k), el("td", {}, String(s.rank)), el("td", {}, String(s.score))))))));
}

function searchPage(params) {
  const text = params.get("q") || "";
  const input = el("input", { type: "search", id: "q", name: "q", value: text, "aria-label": "Search code", placeholder: "parse_config   or   how are sessions refreshed? lang:py path:src/**" });
  const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
  const list = el("ol", { class: "results", id: "results", "aria-label": "Results" });
  // several repositories searched: each, with its results, narrows the search
  const facets = el("nav", { class: "facets", "aria-label": "Repositories" });
  main().append(
    el("h1", {}, "Search"),
    el("form", { class: "bar", role: "search", onsubmit: (ev) => {
      ev.preventDefault();
      navigate(url("/", { q: input.value.trim() }));
    } }, input, el("button", { type: "submit" }, "Search")),
    el("p", { class: "hint" }, "Filters: lang: path: repo: author: since: until: mode: — keys: / search, j/k move, Enter open."),
    status, facets, list);
  let selected = -1;
  const select = (i) => {
    const items = list.querySelectorAll(".result");
    if (!items.length) return;
    selected = Math.max(0, Math.min(items.length - 1, i));
    items.forEach((li, j) => li.classList.toggle("selected", j === selected));
    items[selected].focus({ preventScroll: true });
    items[selected].scrollIntoView({ block: "nearest" });
  };
  const onKey = (ev) => {
    if (ev.target.matches("input, textarea")) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    if (ev.key === "j") select(selected + 1);
    else if (ev.key === "k") select(selected - 1);
    else if (ev.key === "/") { ev.preventDefault(); input.focus(); }
    else if (ev.key === "Enter" && selected >= 0) {
      const li = list.querySelectorAll(".result")[selected];
      if (li) navigate(li.dataset.href);
    }
  };
  document.addEventListener("keydown", onKey);
  if (!text) {
    input.focus();
  } else {
    const q = parseQuery(text);
    setStatus(status, "Searching…");
    api("/api/v1/search", Object.assign({ n: 20, highlight: true }, q)).then((r) => {
      const answered = performance.now();
      list.replaceChildren(...r.results.map(resultItem));
      setStatus(status, `${r.results.length} results in ${r.took_ms} ms${r.notes.length ? " — " + r.notes.join("; ") : ""}`);
      facets.replaceChildren(...(r.repos || []).map((f) =>
        link(url("/", { q: `${text} repo:${f.repo}` }), `repo:${f.repo} (${f.hits})`)));
      // time from the API's answer to the first frame that shows it
      requestAnimationFrame(() => { window.kenPaintMs = performance.now() - answered; });
    }).catch((e) => showError(status, e));
  }
  return () => document.removeEventListener("keydown", onKey);
}

// --- file view -----------------------------------------------------------------

const NAME_CLASSES = ["hl-function", "hl-function-method", "hl-type", "hl-constructor", "hl-variable", "hl-property", "hl-constant", "hl-module"];

function filePage(params) {
  const repo = params.get("repo");
  const path = params.get("path");
  const start = parseInt(params.get("start") || "1", 10);
  const end = parseInt(params.get("end") || String(start), 10);
  const status = el("p", { class: "status", role: "status" });
  const bar = el("div", { class: "symbolbar", "aria-live": "polite" });
  const holder = el("div", { id: "file" });
  main().append(el("h1", {}, path || "File"), el("p", { class: "meta" }, repo || ""), bar, status, holder);
  const showSymbol = (name) => {
    bar.replaceChildren(
      el("span", { class: "symbol" }, name), " — ",
      link(url("/impact", { symbol: name, repo, walk: "callers" }), "callers"), " · ",
      link(url("/impact", { symbol: name, repo, walk: "callees" }), "callees"), " · ",
      link(url("/impact", { symbol: name, repo, walk: "impact" }), "impact"));
  };
  if (params.get("symbol")) showSymbol(params.get("symbol"));
  else bar.textContent = "Click a name in the code for its callers, callees and impact.";
  const from = Math.max(1, start - 300);
  setStatus(status, "Loading…");
  Promise.all([
    api(`/api/v1/repos/${encodeURIComponent(repo)}/file`, { path, start: from, end: end + 300, highlight: true }),
    api(`/api/v1/repos/${encodeURIComponent(repo)}/blame`, { path }).catch(() => ({ ranges: [] })),
  ]).then(([file, blame]) => {
    const firstOfRange = new Map(blame.ranges.map((b) => [b.start_line, b]));
    const gutter = (n) => {
      const b = firstOfRange.get(n);
      return el("span", { class: "gutter", title: b ? `${b.author} — ${b.summary}` : "" },
        b ? `${b.author} ${short(b.sha).slice(0, 7)} ${age(b.when)}` : "");
    };
    const block = codeBlock(file.text.split("\n"), file.lines_html, file.start_line, { chunk: [start, end], gutter });
    block.addEventListener("click", (ev) => {
      const span = ev.target.closest("span");
      if (span && NAME_CLASSES.some((c) => span.classList.contains(c))) showSymbol(span.textContent);
    });
    for (const c of NAME_CLASSES) block.querySelectorAll(`.${c}`).forEach((s) => s.classList.add("clickable"));
    holder.replaceChildren(block);
    setStatus(status, `${file.repo} @ ${short(file.commit)} · lines ${file.start_line}–${file.end_line} of ${file.total_lines}`);
    const row = block.querySelector(`[data-line="${start}"]`);
    if (row) row.scrollIntoView({ block: "center" });
  }).catch((e) => showError(status, e));
}

// --- ask ---------------------------------------------------------------------

function claimItem(c, repo) {
  const marks = { verified: "✓", unverified: "?", invalid: "✗" };
  return el("li", { class: `claim ${c.status}`, "data-status": c.status },
    el("span", { class: "mark", "aria-label": c.status, title: c.status }, marks[c.status] || "?"),
    c.text,
    c.citations.map((x) => x.valid
      ? link(fileHref(repo(x.path), x.path, x.start_line, x.end_line), `${x.path}:${x.start_line}-${x.end_line}`, { class: "cite" })
      : el("span", { class: "cite bad", title: "cites code outside the answer's context" }, `${x.path}:${x.start_line}-${x.end_line}`)));
}

async function streamAsk(question, onEvent) {
  const r = await fetch("/api/v1/ask", {
    method: "POST",
    headers: { Authorization: `Bearer ${token()}`, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ question }),
  });
  if (r.status === 401) { signIn("Your token was refused; sign in again."); return; }
  if (!r.ok) throw new ApiError(r.status, await r.json().catch(() => null));
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

function askPage(params) {
  const question = params.get("q") || "";
  const input = el("textarea", { id: "question", name: "q", "aria-label": "Question", placeholder: "How is the session token refreshed?" });
  input.value = question;
  const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
  const steps = el("ol", { class: "meta", id: "steps" });
  const answer = el("div", { class: "answer", id: "answer", "aria-live": "polite" });
  const claims = el("ol", { class: "claims", id: "claims", "aria-label": "Claims" });
  const sources = el("ol", { id: "sources" });
  main().append(
    el("h1", {}, "Ask"),
    el("form", { class: "bar", onsubmit: (ev) => {
      ev.preventDefault();
      navigate(url("/ask", { q: input.value.trim() }));
    } }, input, el("button", { type: "submit" }, "Ask")),
    status, steps, answer, el("h2", {}, "Claims"), claims, el("h2", {}, "Sources"), sources);
  if (!question) { input.focus(); return; }
  setStatus(status, "Thinking…");
  let repoOf = () => "";
  streamAsk(question, (name, data) => {
    if (name === "step") steps.append(el("li", {}, `${data.kind}: ${data.note} (${data.results} results)`));
    else if (name === "token") answer.append(data.text);
    else if (name === "error") showError(status, new ApiError(0, data));
    else if (name === "done") {
      const byPath = new Map(data.sources.map((s) => [s.path, s.repo]));
      repoOf = (p) => byPath.get(p) || (data.sources[0] && data.sources[0].repo) || "";
      answer.textContent = data.answer;
      claims.replaceChildren(...data.claims.map((c) => claimItem(c, repoOf)));
      sources.replaceChildren(...data.sources.map((s) => el("li", {},
        link(fileHref(s.repo, s.path, s.start_line, s.end_line, s.symbol), `${s.path}:${s.start_line}-${s.end_line}`),
        " ", el("span", { class: "symbol" }, s.symbol || ""))));
      const counts = {};
      for (const c of data.claims) counts[c.status] = (counts[c.status] || 0) + 1;
      setStatus(status, `${data.model ? "Answered by " + data.model : "No language model: the best code, with locations"} — ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(", ")}`);
    }
  }).catch((e) => showError(status, e));
}

// --- people ------------------------------------------------------------------

function peoplePage(params) {
  const q = params.get("q") || "";
  const repo = params.get("repo") || "";
  const input = el("input", { type: "search", id: "who", name: "q", value: q, "aria-label": "Topic, path or symbol", placeholder: "payment retries   or   src/auth/   or   SessionStore" });
  const status = el("p", { class: "status", role: "status" });
  const list = el("ol", { class: "person-list", id: "people" });
  main().append(
    el("h1", {}, "Who knows this code"),
    el("form", { class: "bar", onsubmit: (ev) => {
      ev.preventDefault();
      navigate(url("/people", { q: input.value.trim(), repo }));
    } }, input, el("button", { type: "submit" }, "Find people")),
    status, list);
  if (!q) { input.focus(); return; }
  api("/api/v1/who", { q, repo }).then((r) => {
    setStatus(status, `"${r.query}" read as a ${r.read_as}`);
    list.replaceChildren(...r.people.map((p) => el("li", {},
      el("div", {}, link(url("/person", { id: p.id, repo }), p.name, { class: "person" }), " ", el("span", { class: "meta" }, `score ${p.score.toFixed(3)}`)),
      el("ul", {}, p.evidence.slice(0, 5).map((e) => el("li", { class: "meta" },
        e.symbol ? `${e.symbol} (${e.path})` : e.path,
        ` — ${Math.round(e.share * 100)}% of the lines, last ${age(e.when)}`))))));
    if (!r.people.length) setStatus(status, "Nobody found (is the history indexed?)");
  }).catch((e) => showError(status, e));
}

function personPage(params) {
  const id = params.get("id") || "";
  const repo = params.get("repo") || "";
  const status = el("p", { class: "status", role: "status" });
  const holder = el("div");
  main().append(el("h1", {}, id), status, holder);
  api(`/api/v1/people/${encodeURIComponent(id)}`, { repo }).then((v) => {
    const p = v.person;
    main().querySelector("h1").textContent = p.name;
    const aliases = [...p.emails, ...p.names.filter((n) => n !== p.name), ...p.handles.map((h) => "@" + h)];
    holder.replaceChildren(
      el("p", { class: "meta" }, `${v.repo} · ${p.commits} commits${p.bot ? " · bot" : ""}`),
      el("h2", {}, "Aliases"), el("p", {}, aliases.join(", ") || "—"),
      el("h2", {}, "Areas owned"),
      el("table", { class: "grid" }, el("thead", {}, el("tr", {}, el("th", {}, "directory"), el("th", {}, "lines"), el("th", {}, "share"))),
        el("tbody", {}, v.areas.map((a) => el("tr", {}, el("td", {}, a.path), el("td", {}, String(a.lines)), el("td", {}, `${Math.round(a.share * 100)}%`))))),
      el("h2", {}, "Recent commits"),
      el("ul", {}, v.commits.map((c) => el("li", {}, el("code", {}, short(c.sha)), ` ${c.summary} `, el("span", { class: "meta" }, age(c.when))))));
  }).catch((e) => showError(status, e));
}

// --- impact ------------------------------------------------------------------

/// Results with `via` chains → a tree under the symbol.
function impactTree(results) {
  const key = (r) => `${r.path}:${r.symbol}`;
  const children = new Map([["", []]]);
  for (const r of results) children.set(key(r), []);
  for (const r of results) {
    // via[0] leaves the result; via[1] leaves its parent (none: the root)
    const parent = r.via.length > 1 ? r.via[1].from : "";
    (children.get(parent) || children.get("")).push(r);
  }
  const node = (r) => {
    const kids = children.get(key(r)) || [];
    const hop = r.via[0];
    const label = [
      el("span", { class: "symbol" }, r.symbol), " ",
      link(fileHref(r.repo, r.path, r.start_line, r.end_line, r.symbol), `${r.path}:${r.start_line}-${r.end_line}`),
      hop ? el("span", { class: "meta" }, ` ${hop.kind} at line ${hop.line}`) : null,
    ];
    if (!kids.length) return el("li", { class: "leaf" }, label);
    return el("li", {}, el("details", { open: true }, el("summary", {}, label, el("span", { class: "meta" }, ` (${kids.length})`)), el("ul", {}, kids.map(node))));
  };
  return (children.get("") || []).map(node);
}

function impactPage(params) {
  const symbol = params.get("symbol") || "";
  const repo = params.get("repo") || "";
  const walk = params.get("walk") || "impact";
  const input = el("input", { type: "search", id: "symbol", name: "symbol", value: symbol, "aria-label": "Symbol", placeholder: "Config.from_envvar   or   path:name" });
  const choose = el("select", { name: "walk", "aria-label": "What to follow" },
    ["impact", "callers", "callees"].map((w) => el("option", { value: w, selected: w === walk }, w)));
  const status = el("p", { class: "status", role: "status" });
  const tree = el("ul", { class: "tree", id: "tree" });
  main().append(
    el("h1", {}, "Impact"),
    el("form", { class: "bar", onsubmit: (ev) => {
      ev.preventDefault();
      navigate(url("/impact", { symbol: input.value.trim(), repo, walk: choose.value }));
    } }, input, choose, el("button", { type: "submit" }, "Follow")),
    status, tree);
  if (!symbol) { input.focus(); return; }
  api(`/api/v1/${walk}`, { symbol, repo }).then((r) => {
    for (const x of r.results) x.repo = r.repo;
    const defs = r.candidates.map((c) => `${c.symbol} (${c.path}:${c.start_line})`).join(", ");
    setStatus(status, r.candidates.length ? `${r.results.length} ${walk === "impact" ? "dependents" : walk} of ${defs} in ${r.repo} @ ${short(r.commit)}` : `No definition named ${symbol}`);
    tree.replaceChildren(...impactTree(r.results));
  }).catch((e) => showError(status, e));
}

// --- repositories --------------------------------------------------------------

function reposPage() {
  const status = el("p", { class: "status", role: "status" });
  const repos = el("table", { class: "grid", id: "repos" });
  const jobs = el("table", { class: "grid", id: "jobs" });
  main().append(el("h1", {}, "Repositories"), status, repos, el("h2", {}, "Index jobs"), jobs);
  let timer = null;
  const load = () => Promise.all([api("/api/v1/repos"), api("/api/v1/jobs", { n: 20 })]).then(([r, j]) => {
    repos.replaceChildren(
      el("thead", {}, el("tr", {}, ["name", "commit", "files", "chunks", "embedded", "indexed"].map((h) => el("th", {}, h)))),
      el("tbody", {}, r.repos.map((x) => {
        const e = x.embeddings[0];
        return el("tr", {},
          el("td", {}, x.name), el("td", {}, el("code", {}, short(x.commit)), x.worktree ? " (working tree)" : "", x.pending ? " — run pending" : ""),
          el("td", {}, String(x.stats.files)), el("td", {}, String(x.stats.chunks)),
          el("td", {}, e ? `${Math.round((100 * e.embedded) / Math.max(1, e.chunks))}% (${e.embedded}/${e.chunks})` : "—"),
          el("td", {}, age(x.indexed_at)));
      })));
    jobs.replaceChildren(
      el("thead", {}, el("tr", {}, ["job", "repository", "state", "progress", "from"].map((h) => el("th", {}, h)))),
      el("tbody", {}, j.jobs.map((x) => el("tr", { "data-state": x.state },
        el("td", {}, el("code", {}, x.id)), el("td", {}, `${x.repo}${x.rev ? " @ " + short(x.rev) : ""}`), el("td", {}, x.state),
        el("td", {}, x.state === "running" && x.progress
          ? [el("progress", { max: String(Math.max(1, x.progress.total)), value: String(x.progress.done) }), ` ${x.progress.phase} ${x.progress.done}/${x.progress.total}`]
          : (x.error || "")),
        el("td", {}, `${x.origin}, ${age(x.created_at)}`)))));
    setStatus(status, `${r.repos.length} repositories · updated ${new Date().toLocaleTimeString()}`);
  }).catch((e) => showError(status, e));
  const tick = () => load().finally(() => { timer = setTimeout(tick, 1000); });
  tick();
  return () => clearTimeout(timer);
}

// --- reports -------------------------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

/// Commits per bucket as bars, lines added above and removed below the axis.
function churnChart(timeline, unit) {
  const w = 900, h = 160, mid = 100;
  const n = Math.max(1, timeline.length);
  const slot = w / n, bar = Math.max(1, Math.min(slot * 0.8, 40));
  const maxC = Math.max(1, ...timeline.map((b) => b.commits));
  const maxL = Math.max(1, ...timeline.map((b) => Math.max(b.lines_added, b.lines_removed)));
  const g = svg("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", class: "chart", id: "churn-chart",
    "aria-label": `commits and lines per ${unit}` });
  timeline.forEach((b, i) => {
    const x = i * slot + (slot - bar) / 2;
    const c = (b.commits / maxC) * 60, a = (b.lines_added / maxL) * 30, r = (b.lines_removed / maxL) * 30;
    const tip = svg("title", {}, `${unit} of ${b.start}: ${b.commits} commits, +${b.lines_added} −${b.lines_removed}`);
    g.append(svg("g", {}, tip,
      svg("rect", { x, y: 70 - c, width: bar, height: c, class: "bar-commits" }),
      svg("rect", { x, y: mid + 30 - a, width: bar, height: a, class: "bar-added" }),
      svg("rect", { x, y: mid + 30, width: bar, height: r, class: "bar-removed" })));
  });
  if (timeline.length) {
    g.append(svg("text", { x: 0, y: h - 2, class: "axis" }, timeline[0].start),
      svg("text", { x: w, y: h - 2, "text-anchor": "end", class: "axis" }, timeline[timeline.length - 1].start));
  }
  return g;
}

function plural(n, word) {
  return n === 1 ? `1 ${word}` : `${n} ${word}s`;
}

function commitLine(c) {
  return el("li", {}, el("code", {}, short(c.sha)), ` ${c.date} ${c.summary} `,
    el("span", { class: "meta" }, `${c.author.name} · +${c.lines_added} −${c.lines_removed} · ${c.role}${c.tickets.length ? " · " + c.tickets.map((t) => "#" + t).join(", ") : ""}`));
}

function owners(list) {
  return list.map((o) => `${o.person.name} ${Math.round(o.share * 100)}%${o.inactive ? " (inactive)" : ""}`).join(", ");
}

function table(id, head, rows) {
  return el("table", { class: "grid", id },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
}

function renderReport(r, holder) {
  const s = r.summary;
  const sections = [
    el("p", { class: "meta", id: "report-period" }, `${r.repo} · ${r.period.since} → ${r.period.until} · indexed ${short(r.indexed_commit)}`),
  ];
  if (r.narrative) {
    sections.push(el("h2", {}, "Summary"), el("ul", { id: "narrative" }, r.narrative.statements.map((st) =>
      el("li", { class: st.valid ? "" : "error" }, st.text, " ", el("span", { class: "meta" }, `[${st.cites.join(", ")}]${st.valid ? "" : " — " + st.problem}`)))));
  }
  sections.push(
    el("h2", {}, "Period"),
    el("p", { id: "report-summary" }, `${plural(s.commits, "commit")} (${s.merges} merges) by ${plural(s.authors, "author")}; ${plural(s.bots, "bot")} made ${plural(s.bot_commits, "commit")}. +${s.lines_added} / −${s.lines_removed} lines in ${plural(s.files_changed, "file")}; ${plural(s.new_file_count, "new file")}, ${s.deleted_file_count} deleted.`),
    churnChart(r.timeline, r.timeline_unit),
    table("report-areas", ["area", "commits", "+", "−", "authors"], s.areas.map((a) => [a.area, String(a.commits), String(a.lines_added), String(a.lines_removed), String(a.authors)])),
    el("h2", {}, "Hot files"),
    table("report-hot", ["", "file", "score", "commits", "churn", "fixes", "changes fixed later", "bug tickets"], r.hot_files.map((x) => [
      x.id, el("details", {}, el("summary", {}, x.path), el("ul", {}, x.evidence.map(commitLine))),
      String(x.score), String(x.commits), String(x.churn), String(x.fix_commits), String(x.changes_followed_by_fix), x.bug_tickets.join(", ")])),
    el("h2", {}, "God objects"),
    table("report-god", ["", "kind", "where", "lines", "commits", "authors", "fan-in", "owners"], r.god_objects.map((g) => [
      g.id, g.kind, g.name ? `${g.name} (${g.path})` : g.path, String(g.lines), String(g.commits), String(g.authors), String(g.fan_in), owners(g.owners)])),
    el("h2", {}, "Ownership and bus factor"),
    table("report-owners", ["", "directory", "lines", "bus factor", "owners", ""], r.ownership.map((d) => [
      d.id, d.dir, String(d.lines), String(d.bus_factor),
      el("span", {}, d.owners.map((o) => el("span", { class: "share" }, el("meter", { min: "0", max: "1", value: String(o.share) }), ` ${o.person.name} ${Math.round(o.share * 100)}%${o.inactive ? " (inactive)" : ""} `))),
      d.orphaned ? el("strong", { class: "error" }, "orphaned") : ""])),
    el("h2", {}, "Hardcoded secrets"),
    r.secrets.length
      ? table("report-secrets", ["", "confidence", "rule", "value", "where", "found in", "commit", "author"], r.secrets.map((x) => [
        x.id, x.confidence, x.rule, el("code", {}, x.redacted), `${x.path}:${x.line}`, x.source, el("code", {}, short(x.commit)), x.author ? x.author.name : ""]))
      : el("p", { id: "report-secrets" }, "No hardcoded secret found."),
    el("h2", {}, "People"),
    table("report-people", ["", "person", "commits", "+", "−", "areas", "files owned", "tickets closed"], r.people.map((p) => [
      p.id, p.person.name + (p.bot ? " (bot)" : ""), String(p.commits), String(p.lines_added), String(p.lines_removed),
      p.areas.map(([a, n]) => `${a} ${n}`).join(", "), String(p.files_owned), p.tickets_closed.join(", ")])));
  if (r.tickets) {
    const t = r.tickets;
    sections.push(el("h2", {}, "Tickets"),
      table("report-tickets", ["", "ticket", "title", "state", "commits"], t.in_period.map((x) => [
        x.id, "#" + x.ticket, x.title + (x.bug ? " (bug)" : ""), x.state, el("ul", {}, x.commits.map(commitLine))])),
      el("p", {}, `Closed with no linked code: ${t.closed_without_code.map((x) => "#" + x.ticket).join(", ") || "none"}. Commits with no ticket: ${t.commits_without_ticket_count}.`));
  }
  if (r.notes.length) sections.push(el("ul", { class: "meta" }, r.notes.map((n) => el("li", {}, n))));
  holder.replaceChildren(...sections);
}

function reportPage(params) {
  const repo = params.get("repo") || "";
  const since = params.get("since") || "";
  const until = params.get("until") || "";
  const status = el("p", { class: "status", role: "status" });
  const holder = el("div", { id: "report" });
  const pick = el("select", { name: "repo", id: "report-repo", "aria-label": "Repository" });
  const from = el("input", { name: "since", id: "report-since", value: since, placeholder: "30d, 2024-05-01, all", "aria-label": "Since" });
  const to = el("input", { name: "until", id: "report-until", value: until, placeholder: "the indexed commit", "aria-label": "Until" });
  const download = el("button", { type: "button", id: "report-download", hidden: true }, "Download HTML");
  main().append(el("h1", {}, "Report"),
    el("form", { class: "bar", onsubmit: (ev) => {
      ev.preventDefault();
      navigate(url("/report", { repo: pick.value, since: from.value.trim(), until: to.value.trim() }));
    } }, pick, from, to, el("button", { type: "submit" }, "Report"), download),
    status, holder);
  api("/api/v1/repos").then((r) => {
    pick.replaceChildren(...r.repos.map((x) => el("option", { value: x.name, selected: x.name === repo }, x.name)));
    const name = repo || (r.repos[0] && r.repos[0].name);
    if (!name) { setStatus(status, "Nothing is indexed yet."); return; }
    setStatus(status, "Building the report…");
    const q = { since, until };
    return api(`/api/v1/repos/${encodeURIComponent(name)}/report`, q).then((rep) => {
      setStatus(status, "");
      renderReport(rep, holder);
      download.hidden = false;
      download.onclick = () => api(`/api/v1/repos/${encodeURIComponent(name)}/report`, Object.assign({ format: "html" }, q)).then((html) => {
        const a = el("a", { href: URL.createObjectURL(new Blob([html], { type: "text/html" })), download: `kenning-report-${name}.html` });
        a.click();
        URL.revokeObjectURL(a.href);
      }).catch((e) => showError(status, e));
    });
  }).catch((e) => showError(status, e));
}

function notFoundPage() {
  main().append(el("h1", {}, "Not found"), el("p", {}, link("/", "Search")));
}
