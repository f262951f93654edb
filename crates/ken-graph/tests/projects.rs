//! Multi-file projects (a Python package, a Rust crate, a JS module set, a
//! Go package): their edges, callers, callees and impact, written out by
//! hand from the code below.

mod common;

use common::*;

const PYTHON: &str = include_str!("projects_python.txt");

#[test]
fn python_package() {
    let w = world(PYTHON);
    for (kind, from, to) in [
        ("call", "cli.py:main", "pkg/app.py:App"),
        ("call", "cli.py:main", "pkg/base.py:Base.serve"),
        ("call", "cli.py:<module>", "cli.py:main"),
        ("call", "pkg/base.py:Base.serve", "pkg/base.py:Base.prepare"),
        ("call", "pkg/base.py:Base.serve", "pkg/base.py:Base.execute"),
        (
            "call",
            "pkg/app.py:App.__init__",
            "pkg/config.py:load_config",
        ),
        ("call", "pkg/app.py:App.execute", "pkg/app.py:helper"),
        ("call", "pkg/config.py:load_config", "pkg/config.py:parse"),
        ("call", "pkg/config.py:load_config", "pkg/config.py:read"),
        ("inherit", "pkg/app.py:App", "pkg/base.py:Base"),
        ("import", "cli.py:<module>", "pkg/app.py:App"),
        ("import", "pkg/__init__.py:<module>", "pkg/app.py:App"),
        (
            "import",
            "pkg/__init__.py:<module>",
            "pkg/config.py:load_config",
        ),
        ("import", "pkg/app.py:<module>", "pkg/base.py:Base"),
    ] {
        assert!(
            w.has_edge(kind, from, to),
            "{kind} {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    // `sys`, `os` and `sys.argv` are outside the package
    assert!(!w.edges().iter().any(|e| e.contains("sys")));

    let load = w.node("pkg/config.py:load_config");
    assert_set(
        "callers(load_config)",
        w.reached(&w.graph.callers(load, 1)),
        &["1 pkg/app.py:App.__init__"],
        &w,
    );
    let parse = w.node("pkg/config.py:parse");
    assert_set(
        "callers(parse, 2)",
        w.reached(&w.graph.callers(parse, 2)),
        &["1 pkg/config.py:load_config", "2 pkg/app.py:App.__init__"],
        &w,
    );
    let main = w.node("cli.py:main");
    assert_set(
        "callees(main)",
        w.reached(&w.graph.callees(main)),
        &["1 pkg/app.py:App", "1 pkg/base.py:Base.serve"],
        &w,
    );
    let impact = w.graph.impact(parse, 5);
    assert_eq!(
        w.reached(&impact),
        [
            "1 pkg/config.py:load_config",
            "2 pkg/__init__.py:<module>",
            "2 pkg/app.py:<module>",
            "2 pkg/app.py:App.__init__",
        ]
    );
    let init = impact
        .iter()
        .find(|r| r.depth == 2 && w.graph.key(r.node).qualname == "App.__init__")
        .unwrap();
    assert_eq!(
        w.via(init),
        [
            "pkg/app.py:App.__init__ -> pkg/config.py:load_config",
            "pkg/config.py:load_config -> pkg/config.py:parse",
        ]
    );
    // Deleting `Base` breaks `App`, its module, and whoever uses `App`.
    let base = w.node("pkg/base.py:Base");
    assert_eq!(
        w.reached(&w.graph.impact(base, 2)),
        [
            "1 pkg/app.py:<module>",
            "1 pkg/app.py:App",
            "2 cli.py:<module>",
            "2 cli.py:main",
            "2 pkg/__init__.py:<module>",
        ]
    );
}

const RUST: &str = r#"
//- src/lib.rs
pub mod config;
mod search;

pub use crate::search::Searcher;

pub fn run(path: &str) -> usize {
    let cfg = config::Config::load(path);
    let mut s = Searcher::new(cfg);
    s.search("needle")
}

//- src/config.rs
#[derive(Clone, Default)]
pub struct Config {
    pub case_insensitive: bool,
}

impl Config {
    pub fn load(path: &str) -> Config {
        let mut c = Config::default();
        c.case_insensitive = parse_flag(path);
        c
    }
}

fn parse_flag(s: &str) -> bool {
    s.ends_with("-i")
}

//- src/search.rs
use crate::config::Config;

pub trait Matcher {
    fn is_match(&self, line: &str) -> bool;
}

pub struct Searcher {
    config: Config,
}

impl Searcher {
    pub fn new(config: Config) -> Searcher {
        Searcher { config }
    }

    pub fn search(&mut self, needle: &str) -> usize {
        let m = Literal::new(needle, self.config.case_insensitive);
        self.count(&m)
    }

    fn count<M: Matcher>(&self, m: &M) -> usize {
        ["a", "b"].iter().filter(|l| m.is_match(l)).count()
    }
}

struct Literal {
    needle: String,
}

impl Literal {
    fn new(needle: &str, _ci: bool) -> Literal {
        Literal { needle: needle.to_string() }
    }
}

impl Matcher for Literal {
    fn is_match(&self, line: &str) -> bool {
        line.contains(&self.needle)
    }
}
"#;

#[test]
fn rust_crate() {
    let w = world(RUST);
    for (kind, from, to) in [
        ("call", "src/lib.rs:run", "src/config.rs:Config.load"),
        ("call", "src/lib.rs:run", "src/search.rs:Searcher.new"),
        ("call", "src/lib.rs:run", "src/search.rs:Searcher.search"),
        (
            "call",
            "src/config.rs:Config.load",
            "src/config.rs:parse_flag",
        ),
        (
            "call",
            "src/search.rs:Searcher.search",
            "src/search.rs:Literal.new",
        ),
        (
            "call",
            "src/search.rs:Searcher.search",
            "src/search.rs:Searcher.count",
        ),
        ("import", "src/lib.rs:<module>", "src/search.rs:Searcher"),
        ("import", "src/search.rs:<module>", "src/config.rs:Config"),
        ("type", "src/search.rs:Searcher", "src/config.rs:Config"),
        (
            "type",
            "src/search.rs:Searcher.new",
            "src/search.rs:Searcher",
        ),
        (
            "type",
            "src/search.rs:Searcher.count",
            "src/search.rs:Matcher",
        ),
        ("type", "src/config.rs:Config#1", "src/config.rs:Config"),
        (
            "inherit",
            "src/search.rs:Literal#2",
            "src/search.rs:Matcher",
        ),
    ] {
        assert!(
            w.has_edge(kind, from, to),
            "{kind} {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    // `m.is_match` could be the trait's or `Literal`'s: ambiguous, no edge
    assert!(
        !w.edges()
            .iter()
            .any(|e| e.contains("is_match") && e.starts_with("call"))
    );
    assert!(w.resolution.stats.call.ambiguous >= 1);

    let run = w.node("src/lib.rs:run");
    assert_set(
        "callees(run)",
        w.reached(&w.graph.callees(run)),
        &[
            "1 src/config.rs:Config.load",
            "1 src/search.rs:Searcher.new",
            "1 src/search.rs:Searcher.search",
        ],
        &w,
    );
    let new = w.node("src/search.rs:Literal.new");
    assert_eq!(
        w.reached(&w.graph.callers(new, 3)),
        ["1 src/search.rs:Searcher.search", "2 src/lib.rs:run",]
    );
    let config = w.node("src/config.rs:Config");
    assert_eq!(
        w.reached(&w.graph.impact(config, 2)),
        [
            "1 src/config.rs:Config#1",
            "1 src/config.rs:Config.load",
            "1 src/search.rs:<module>",
            "1 src/search.rs:Searcher",
            "1 src/search.rs:Searcher.new",
            "2 src/lib.rs:<module>",
            "2 src/lib.rs:run",
            "2 src/search.rs:Searcher#1",
        ]
    );
}

const JS: &str = r#"
//- lib/index.js
'use strict';
var Router = require('./router');
var utils = require('./utils');

function createApp() {
  var app = new Router();
  app.use(utils.logger('dev'));
  return app;
}

module.exports = createApp;

//- lib/router.js
var utils = require('./utils');

function Router() {
  this.stack = [];
}

Router.prototype.use = function use(fn) {
  this.stack.push(utils.wrap(fn));
  return this;
};

Router.prototype.handle = function handle(req) {
  return this.stack.map(function (layer) { return layer(req); });
};

module.exports = Router;

//- lib/utils.js
exports.logger = function logger(format) {
  return function log(req) { return format + req.url; };
};

exports.wrap = function wrap(fn) {
  return flatten([fn])[0];
};

function flatten(arr) {
  return [].concat.apply([], arr);
}
"#;

#[test]
fn js_modules() {
    let w = world(JS);
    for (kind, from, to) in [
        ("call", "lib/index.js:createApp", "lib/router.js:Router"),
        (
            "call",
            "lib/index.js:createApp",
            "lib/router.js:Router.prototype.use",
        ),
        (
            "call",
            "lib/index.js:createApp",
            "lib/utils.js:exports.logger",
        ),
        (
            "call",
            "lib/router.js:Router.prototype.use",
            "lib/utils.js:exports.wrap",
        ),
        ("call", "lib/utils.js:exports.wrap", "lib/utils.js:flatten"),
        ("import", "lib/index.js:<module>", "lib/router.js:Router"),
        ("import", "lib/index.js:<module>", "lib/utils.js:<module>"),
        ("import", "lib/router.js:<module>", "lib/utils.js:<module>"),
    ] {
        assert!(
            w.has_edge(kind, from, to),
            "{kind} {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    let flatten = w.node("lib/utils.js:flatten");
    let callers = w.graph.callers(flatten, 3);
    assert_eq!(
        w.reached(&callers),
        [
            "1 lib/utils.js:exports.wrap",
            "2 lib/router.js:Router.prototype.use",
            "3 lib/index.js:createApp",
        ]
    );
    assert_eq!(
        w.via(&callers[2]),
        [
            "lib/index.js:createApp -> lib/router.js:Router.prototype.use",
            "lib/router.js:Router.prototype.use -> lib/utils.js:exports.wrap",
            "lib/utils.js:exports.wrap -> lib/utils.js:flatten",
        ]
    );
    let create = w.node("lib/index.js:createApp");
    assert_set(
        "callees(createApp)",
        w.reached(&w.graph.callees(create)),
        &[
            "1 lib/router.js:Router",
            "1 lib/router.js:Router.prototype.use",
            "1 lib/utils.js:exports.logger",
        ],
        &w,
    );
    let wrap = w.node("lib/utils.js:exports.wrap");
    assert_eq!(
        w.reached(&w.graph.impact(wrap, 5)),
        [
            "1 lib/router.js:Router.prototype.use",
            "2 lib/index.js:createApp",
            // `module.exports = createApp` reads it
            "3 lib/index.js:<module>",
        ]
    );
}

const GO: &str = r#"
//- command.go
package cobra

import (
	"fmt"
	"strings"
)

// Command is a CLI command.
type Command struct {
	Use      string
	commands []*Command
	parent   *Command
}

func (c *Command) AddCommand(cmds ...*Command) {
	for _, x := range cmds {
		x.parent = c
		c.commands = append(c.commands, x)
	}
}

func (c *Command) Name() string {
	name := c.Use
	if i := strings.Index(name, " "); i >= 0 {
		name = name[:i]
	}
	return name
}

func (c *Command) CommandPath() string {
	if c.HasParent() {
		return c.Parent().CommandPath() + " " + c.Name()
	}
	return c.Name()
}

func (c *Command) Execute() error {
	fmt.Println(c.CommandPath())
	return nil
}

//- parent.go
package cobra

func (c *Command) HasParent() bool {
	return c.parent != nil
}

func (c *Command) Parent() *Command {
	return c.parent
}

//- cobra.go
package cobra

func NewRoot(use string) *Command {
	root := &Command{Use: use}
	root.AddCommand(newVersion())
	return root
}

func newVersion() *Command {
	return &Command{Use: "version"}
}
"#;

#[test]
fn go_package() {
    let w = world(GO);
    for (kind, from, to) in [
        (
            "call",
            "command.go:Command.CommandPath",
            "parent.go:Command.HasParent",
        ),
        (
            "call",
            "command.go:Command.CommandPath",
            "parent.go:Command.Parent",
        ),
        (
            "call",
            "command.go:Command.CommandPath",
            "command.go:Command.Name",
        ),
        (
            "call",
            "command.go:Command.Execute",
            "command.go:Command.CommandPath",
        ),
        ("call", "cobra.go:NewRoot", "cobra.go:newVersion"),
        ("call", "cobra.go:NewRoot", "command.go:Command.AddCommand"),
        ("type", "cobra.go:NewRoot", "command.go:Command"),
        ("type", "parent.go:Command.Parent", "command.go:Command"),
    ] {
        assert!(
            w.has_edge(kind, from, to),
            "{kind} {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    // standard library packages are external
    assert!(
        !w.edges()
            .iter()
            .any(|e| e.contains("Println") || e.contains("Index"))
    );
    assert_eq!(w.resolution.stats.import.by_reason.values().sum::<u64>(), 2);

    let has_parent = w.node("parent.go:Command.HasParent");
    assert_eq!(
        w.reached(&w.graph.callers(has_parent, 1)),
        ["1 command.go:Command.CommandPath"]
    );
    let path = w.node("command.go:Command.CommandPath");
    assert_set(
        "callees(CommandPath)",
        w.reached(&w.graph.callees(path)),
        &[
            // `c.Parent().CommandPath()`: recursion, as a compiler sees it
            "1 command.go:Command.CommandPath",
            "1 command.go:Command.Name",
            "1 parent.go:Command.HasParent",
            "1 parent.go:Command.Parent",
        ],
        &w,
    );
    assert_eq!(
        w.reached(&w.graph.impact(has_parent, 3)),
        [
            "1 command.go:Command.CommandPath",
            "2 command.go:Command.Execute",
        ]
    );
    let version = w.node("cobra.go:newVersion");
    assert_eq!(
        w.reached(&w.graph.callers(version, 2)),
        ["1 cobra.go:NewRoot"]
    );
}

/// A debugging aid: `cargo test -p ken-graph --test projects -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_all_edges() {
    for f in [PYTHON, RUST, JS, GO] {
        let w = world(f);
        println!(
            "{}\n{:?}\n",
            w.edges().join("\n"),
            w.resolution.stats.total()
        );
    }
}

/// `import pkg` from a test file: the package under `src/` (where sys.path
/// would find it), not a same-named fixture module nested deep in a test
/// directory that is no ancestor of the importer.
#[test]
fn python_absolute_import_prefers_source_root() {
    let w = world(
        "//- src/pkg/__init__.py
def f():
    return 1

//- tests/apps/a/b/pkg.py
def g():
    return 2

//- tests/test_x.py
import pkg


def test_f():
    assert pkg.f() == 1
",
    );
    assert!(
        w.has_edge("call", "tests/test_x.py:test_f", "src/pkg/__init__.py:f"),
        "{}",
        w.edges().join("\n")
    );
    // a module in the importer's own directory is still preferred (sys.path[0])
    let w = world(
        "//- src/pkg/__init__.py
def f():
    return 1

//- tests/pkg.py
def f():
    return 2

//- tests/test_x.py
import pkg


def test_f():
    assert pkg.f() == 1
",
    );
    assert!(
        w.has_edge("call", "tests/test_x.py:test_f", "tests/pkg.py:f"),
        "{}",
        w.edges().join("\n")
    );
}

const ALIASES: &str = r#"
//- pkg/__init__.py
//- pkg/helpers.py
def render(x):
    return x

//- pkg/view.py
from .helpers import render as render_page


def show(x):
    return render_page(x)

//- src/serve.ts
export function serveStatic(root: string): string {
  return root
}

//- src/adapter.ts
import { serveStatic as baseServeStatic } from './serve'

export function serveStatic(root: string): string {
  return baseServeStatic(root)
}
"#;

#[test]
fn an_import_is_bound_under_its_alias() {
    let w = world(ALIASES);
    for (from, to) in [
        ("pkg/view.py:show", "pkg/helpers.py:render"),
        ("src/adapter.ts:serveStatic", "src/serve.ts:serveStatic"),
    ] {
        assert!(
            w.has_edge("call", from, to),
            "call {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    // the original name is not bound in the importing file
    assert!(!w.has_edge(
        "call",
        "src/adapter.ts:serveStatic",
        "src/adapter.ts:serveStatic"
    ));
}

const EXPORT_ALIASES: &str = r#"
//- src/hono-base.ts
class Hono {
  request(path: string): string {
    return path
  }
}

export { Hono as HonoBase }

//- src/utils/mime.ts
const baseMimes = { txt: 'text/plain' }
export function lookup(ext: string): string {
  return ext
}
export { lookup as getMimeType } from './lookup'

//- src/utils/lookup.ts
export function lookup(ext: string): string {
  return ext
}

//- src/hono.ts
import { HonoBase } from './hono-base'
import { getMimeType } from './utils/mime'

export class Hono extends HonoBase {
  serve(path: string): string {
    getMimeType(path)
    return this.request(path)
  }
}

//- pkg/__init__.py
from .helpers import render as render_page

//- pkg/helpers.py
def render(x):
    return x

//- pkg/view.py
from pkg import render_page


def show(x):
    return render_page(x)
"#;

#[test]
fn a_name_exported_under_another_is_found_under_it() {
    let w = world(EXPORT_ALIASES);
    for (kind, from, to) in [
        // `export { Hono as HonoBase }` in the file that defines it
        ("inherit", "src/hono.ts:Hono", "src/hono-base.ts:Hono"),
        (
            "call",
            "src/hono.ts:Hono.serve",
            "src/hono-base.ts:Hono.request",
        ),
        // `export { lookup as getMimeType } from './lookup'`
        (
            "call",
            "src/hono.ts:Hono.serve",
            "src/utils/lookup.ts:lookup",
        ),
        // a package's `from .helpers import render as render_page`
        ("call", "pkg/view.py:show", "pkg/helpers.py:render"),
    ] {
        assert!(
            w.has_edge(kind, from, to),
            "{kind} {from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    // the re-export's original name is not what the file exports
    assert!(!w.has_edge("call", "src/hono.ts:Hono.serve", "src/utils/mime.ts:lookup"));
}

const ALIASED_BASE: &str = r#"
//- flask/sansio/blueprints.py
class Blueprint:
    def app_template_global(self, name=None):
        return name

//- flask/blueprints.py
from .sansio.blueprints import Blueprint as SansioBlueprint


class Blueprint(SansioBlueprint):
    def send_static_file(self, filename):
        return filename

//- flask/sansio/app.py
class App:
    def app_template_global(self, name=None):
        return name

//- tests/test_blueprints.py
from flask.blueprints import Blueprint


def test_template_global():
    bp = Blueprint("bp", __name__)

    @bp.app_template_global()
    def get_answer():
        return 42
"#;

#[test]
fn a_base_imported_under_an_alias_gives_its_members() {
    let w = world(ALIASED_BASE);
    let edge = (
        "call",
        "tests/test_blueprints.py:test_template_global.get_answer",
        "flask/sansio/blueprints.py:Blueprint.app_template_global",
    );
    assert!(
        w.has_edge(edge.0, edge.1, edge.2),
        "{edge:?}\n{}",
        w.edges().join("\n")
    );
    // the other method of that name is not reached
    assert!(!w.has_edge(
        "call",
        "tests/test_blueprints.py:test_template_global.get_answer",
        "flask/sansio/app.py:App.app_template_global"
    ));
}

// flask's globals: `request` is a module variable annotated with a proxy
// class (declared under TYPE_CHECKING) whose base is the real class; it is
// imported through the package's `__init__`.
const TYPED_GLOBALS: &str = r#"
//- flask/wrappers.py
class Request:
    def get_json(self):
        return {}

    def close(self):
        pass
//- flask/app.py
class Flask:
    def ensure_sync(self, f):
        return f
//- flask/globals.py
import typing as t

from werkzeug.local import LocalProxy

if t.TYPE_CHECKING:
    from .app import Flask
    from .wrappers import Request

    class FlaskProxy(Flask): ...

    class RequestProxy(Request): ...


current_app: FlaskProxy = LocalProxy(_cv_app, "app")
request: RequestProxy = LocalProxy(_cv_app, "request")
//- flask/__init__.py
from .app import Flask as Flask
from .globals import current_app as current_app
from .globals import request as request
//- flask/views.py
from . import typing
from .globals import current_app


def dispatch(view):
    return current_app.ensure_sync(view)()
//- tests/test_json.py
from flask import request


def test_json():
    data = request.get_json()
    request.close
    return data


def test_other(close):
    return close.get_json()


def test_shadowed(request):
    return request.close()
//- tests/test_session.py
import flask


def test_permanent():
    return flask.request.get_json()
//- tests/test_local.py
def test_inner():
    from blueprintapp import app

    return app


def test_fixture(app):
    return app.ensure_sync(None)
//- blueprintapp/__init__.py
from flask.app import Flask

app = Flask(__name__)
"#;

#[test]
fn an_imported_module_variable_takes_the_class_its_module_says() {
    let w = world(TYPED_GLOBALS);
    let edges = [
        // through the package's re-export, then the proxy's base
        (
            "call",
            "tests/test_json.py:test_json",
            "flask/wrappers.py:Request.get_json",
        ),
        // a method read as a value
        (
            "read",
            "tests/test_json.py:test_json",
            "flask/wrappers.py:Request.close",
        ),
        // through the imported package
        (
            "call",
            "tests/test_session.py:test_permanent",
            "flask/wrappers.py:Request.get_json",
        ),
        // imported from the module itself
        (
            "call",
            "flask/views.py:dispatch",
            "flask/app.py:Flask.ensure_sync",
        ),
    ];
    for edge in edges {
        assert!(
            w.has_edge(edge.0, edge.1, edge.2),
            "{edge:?}\n{}",
            w.edges().join("\n")
        );
    }
    // by its class, not by a guess on the method's unique name
    let typed = "call tests/test_session.py:test_permanent -> flask/wrappers.py:Request.get_json (receiver)";
    assert!(
        w.edges().iter().any(|e| e == typed),
        "{}",
        w.edges().join("\n")
    );
    // a parameter that is not the imported variable is not typed by it
    // (only the repository's one `get_json` guesses it, and says so), nor
    // is one of the same name, nor a name imported inside another function
    for caller in ["test_other", "test_shadowed", "test_fixture"] {
        assert!(
            !w.edges()
                .iter()
                .any(|e| e.contains(caller) && e.contains("(receiver)")),
            "{caller}\n{}",
            w.edges().join("\n")
        );
    }
}

const SUPER_CALLS: &str = r#"
//- cli.py
import click


class AppGroup(click.Group):
    def group(self, *args, **kwargs):
        kwargs.setdefault("cls", AppGroup)
        return super().group(*args, **kwargs)


class Base:
    def run(self):
        return 1


class Child(Base):
    def run(self):
        return super().run() + 1
"#;

#[test]
fn super_reaches_a_base_never_the_caller_itself() {
    let w = world(SUPER_CALLS);
    // click's Group is outside: no edge, and not one to itself by guessing
    assert!(
        !w.has_edge("call", "cli.py:AppGroup.group", "cli.py:AppGroup.group"),
        "{}",
        w.edges().join("\n")
    );
    assert!(w.has_edge("call", "cli.py:Child.run", "cli.py:Base.run"));
    assert!(!w.has_edge("call", "cli.py:Child.run", "cli.py:Child.run"));
}

const MODULE_HUB: &str = r#"
//- pkg/__init__.py
//- pkg/helpers.py
def render(x):
    return x


DEFAULT = render(0)

//- pkg/views.py
from pkg import helpers


def show():
    helpers(1)
    return helpers.render(1)

//- app.py
from pkg import views


def main():
    return views.show()
"#;

#[test]
fn a_module_is_imported_not_called_and_impact_stops_at_it() {
    let w = world(MODULE_HUB);
    assert!(w.has_edge("import", "pkg/views.py:<module>", "pkg/helpers.py:<module>"));
    // `helpers(1)` calls a module: nothing to tie it to
    assert!(
        !w.has_edge("call", "pkg/views.py:show", "pkg/helpers.py:<module>"),
        "{}",
        w.edges().join("\n")
    );
    assert!(w.has_edge("call", "pkg/views.py:show", "pkg/helpers.py:render"));
    // helpers.py's top level calls `render`; the files importing the
    // whole module depend on it through their own edges, not through it
    let render = w.node("pkg/helpers.py:render");
    assert_eq!(
        w.reached(&w.graph.impact(render, 5)),
        [
            "1 pkg/helpers.py:<module>",
            "1 pkg/views.py:show",
            "2 app.py:main",
        ]
    );
}

const SIBLINGS: &str = r#"
//- src/ui.test.ts
describe('ui', () => {
  it('a', () => {
    const Content = () => 'a'
    const Component = () => Content()
  })
  it('b', () => {
    const Content = () => 'b'
    const Component = () => Content()
  })
})
"#;

#[test]
fn of_definitions_sharing_a_name_the_nearest_before_the_reference_is_meant() {
    let w = world(SIBLINGS);
    for (from, to) in [
        ("src/ui.test.ts:Component", "src/ui.test.ts:Content"),
        ("src/ui.test.ts:Component#1", "src/ui.test.ts:Content#1"),
    ] {
        assert!(
            w.has_edge("call", from, to),
            "{from} -> {to}\n{}",
            w.edges().join("\n")
        );
    }
    assert!(!w.has_edge(
        "call",
        "src/ui.test.ts:Component#1",
        "src/ui.test.ts:Content"
    ));
}

const OVERLOADS_AFTER: &str = r#"
//- cfg.py
from typing import overload


def main():
    return get(1)


@overload
def get(k: int) -> int: ...
@overload
def get(k: str) -> str: ...
def get(k):
    value = k
    return value
"#;

#[test]
fn a_function_called_before_its_overloads_is_their_implementation() {
    let w = world(OVERLOADS_AFTER);
    assert!(
        w.has_edge("call", "cfg.py:main", "cfg.py:get#2"),
        "{}",
        w.edges().join("\n")
    );
}
