//! Receivers typed by assignment: a call through a variable (`db.query()`)
//! learns the class the variable was made from (`db = Database(...)`,
//! `const db = new Database()`, `self.db = Database(...)` in a method of
//! the class), so that resolution can look the method up in that class
//! instead of guessing by its name.

use std::collections::HashMap;

use ken_core::{ChunkKind, RefKind, Reference, TypedValue};

use crate::names::is_name;
use crate::walk::Def;

/// An assignment the extractor saw.
pub(crate) struct Assigned {
    /// The innermost definition around it (an index into the walker's
    /// definitions; None: module level).
    pub from: Option<usize>,
    /// The target as written, without spaces: `x`, `self.x`, `this.x`.
    pub target: String,
    /// The class its value makes (None: a value of another kind).
    pub class: Option<String>,
    /// The value when it is a bare name (`self.app = app`): the target
    /// takes that variable's class, where one is known there.
    pub copy_of: Option<String>,
    pub line: u32,
}

/// Qualifiers that name the instance a method runs on.
const SELF: &[&str] = &["self", "this"];

/// Set [`Reference::receiver`] on the calls and reads made through a
/// variable or an attribute of `self`/`this` whose class the assignments
/// say.
pub(crate) fn annotate(refs: &mut [Reference], assigned: &mut [Assigned], defs: &[Def]) {
    let kinds: HashMap<&str, ChunkKind> =
        defs.iter().map(|d| (d.qualname.as_str(), d.kind)).collect();
    // a copy of a typed variable takes its class (`self.app = app` after
    // `def __init__(self, app: Flask)`), one step deep
    let copies: Vec<(usize, String)> = {
        let scopes = Scopes {
            assigned,
            defs,
            kinds: &kinds,
        };
        assigned
            .iter()
            .enumerate()
            .filter(|(_, a)| a.class.is_none())
            .filter_map(|(i, a)| {
                let v = a.copy_of.as_deref()?;
                let from = a.from.map(|d| defs[d].qualname.as_str());
                Some((i, scopes.variable(v, from, a.line)?))
            })
            .collect()
    };
    for (i, class) in copies {
        assigned[i].class = Some(class);
    }
    let scopes = Scopes {
        assigned,
        defs,
        kinds: &kinds,
    };
    for r in refs
        .iter_mut()
        .filter(|r| matches!(r.kind, RefKind::Call | RefKind::Read))
    {
        let Some(q) = r.qualifier.as_deref() else {
            continue;
        };
        r.receiver = if is_name(q) {
            scopes.variable(q, r.from.as_deref(), r.line)
        } else {
            match q.split_once('.') {
                Some((head, attr)) if SELF.contains(&head) && is_name(attr) => {
                    scopes.attribute(q, r.from.as_deref())
                }
                _ => None,
            }
        };
    }
}

struct Scopes<'a> {
    assigned: &'a [Assigned],
    defs: &'a [Def],
    kinds: &'a HashMap<&'a str, ChunkKind>,
}

impl Scopes<'_> {
    fn scope(&self, a: &Assigned) -> Option<&str> {
        a.from.map(|d| self.defs[d].qualname.as_str())
    }

    /// `x.m()` in `from` at `line`: the class of the last assignment of `x`
    /// before it in the same scope; without one there, the enclosing
    /// functions' and then the module's, when all of that scope's
    /// assignments of `x` agree (a function may run after any of them).
    /// Class bodies are skipped: their names are not seen by methods.
    fn variable(&self, x: &str, from: Option<&str>, line: u32) -> Option<String> {
        let mut scope = from;
        loop {
            let here: Vec<&Assigned> = self
                .assigned
                .iter()
                .filter(|a| a.target == x && self.scope(a) == scope)
                .collect();
            if !here.is_empty() {
                if scope == from {
                    // assigned in its own scope: a local, whatever it held before
                    return here.iter().rfind(|a| a.line <= line)?.class.clone();
                }
                return agreed(&here);
            }
            scope = self.enclosing(scope?);
        }
    }

    /// The scope around `qualname` whose names it sees: the nearest
    /// enclosing definition that is not class-like, else the module.
    fn enclosing<'q>(&self, qualname: &'q str) -> Option<&'q str> {
        let mut p = qualname.rsplit_once('.').map(|(a, _)| a);
        while let Some(q) = p {
            if !self.kinds.get(q).is_some_and(|k| k.is_container()) {
                return Some(q);
            }
            p = q.rsplit_once('.').map(|(a, _)| a);
        }
        None
    }

    /// `self.x.m()` in a method: the class every assignment of `self.x` in
    /// the methods of the enclosing class agrees on.
    fn attribute(&self, q: &str, from: Option<&str>) -> Option<String> {
        let class = self.class_of(from?)?;
        let prefix = format!("{class}.");
        let here: Vec<&Assigned> = self
            .assigned
            .iter()
            .filter(|a| a.target == q && self.scope(a).is_some_and(|s| s.starts_with(&prefix)))
            .collect();
        agreed(&here)
    }

    /// The innermost class-like definition around `qualname`.
    fn class_of<'q>(&self, qualname: &'q str) -> Option<&'q str> {
        let mut p = qualname.rsplit_once('.').map(|(a, _)| a);
        while let Some(q) = p {
            if self.kinds.get(q).is_some_and(|k| k.is_container()) {
                return Some(q);
            }
            p = q.rsplit_once('.').map(|(a, _)| a);
        }
        None
    }
}

/// The module-level variables whose assignments all made one class
/// (after [`annotate`], so copies count), in the order first assigned.
pub(crate) fn module_values(assigned: &[Assigned]) -> Vec<TypedValue> {
    // each name's module-level assignments, names in the order first assigned
    let mut order: Vec<&str> = Vec::new();
    let mut by_name: HashMap<&str, Vec<&Assigned>> = HashMap::new();
    for a in assigned.iter().filter(|a| a.from.is_none()) {
        let list = by_name.entry(a.target.as_str()).or_default();
        if list.is_empty() {
            order.push(&a.target);
        }
        list.push(a);
    }
    order
        .into_iter()
        .filter(|name| is_name(name))
        .filter_map(|name| {
            Some(TypedValue {
                name: name.to_string(),
                class: agreed(&by_name[name])?,
            })
        })
        .collect()
}

/// The class every assignment made, when they all made the same one.
fn agreed(list: &[&Assigned]) -> Option<String> {
    let first = list.first()?.class.as_ref()?;
    list.iter()
        .all(|a| a.class.as_ref() == Some(first))
        .then(|| first.clone())
}

#[cfg(test)]
mod tests {
    fn calls(path: &str, src: &str) -> Vec<(String, Option<String>)> {
        let syntax = crate::parse_file(path, src, &Default::default());
        syntax
            .references
            .into_iter()
            .filter(|r| r.kind == ken_core::RefKind::Call && r.qualifier.is_some())
            .map(|r| (format!("{}.{}", r.qualifier.unwrap(), r.name), r.receiver))
            .collect()
    }

    fn receiver<'a>(found: &'a [(String, Option<String>)], call: &str) -> Option<&'a str> {
        found
            .iter()
            .find(|(c, _)| c == call)
            .unwrap_or_else(|| panic!("no call {call} in {found:?}"))
            .1
            .as_deref()
    }

    #[test]
    fn python_variables_take_the_class_they_were_made_from() {
        let src = "\
import flask
from store import Database as Db

app = flask.Flask(__name__)


def find(name):
    db = Db(\"sqlite://\")
    rows = db.query(name)
    conn = connect()
    conn.close()
    app.logger.info(name)
    return rows


def view():
    app.add_url_rule(\"/\")


class Repo:
    def __init__(self):
        self.db = Db(\"x\")
        self.cache = {}

    def get(self, k):
        self.cache.clear()
        return self.db.query(k)
";
        let found = calls("app.py", src);
        assert_eq!(receiver(&found, "db.query"), Some("Db"));
        // made by a call of a lower-case name: a factory, not a class
        assert_eq!(receiver(&found, "conn.close"), None);
        // a module-level variable, seen from a function
        assert_eq!(receiver(&found, "app.add_url_rule"), Some("flask.Flask"));
        // an attribute of the instance, assigned in another method
        assert_eq!(receiver(&found, "self.db.query"), Some("Db"));
        assert_eq!(receiver(&found, "self.cache.clear"), None);
    }

    #[test]
    fn a_local_assignment_hides_the_module_one_and_the_last_one_counts() {
        let src = "\
client = Client()


def f():
    client = Other()
    client.send()


def g():
    x = A()
    x.run()
    x = B()
    x.run()
";
        let found = calls("m.py", src);
        assert_eq!(receiver(&found, "client.send"), Some("Other"));
        let runs: Vec<Option<&str>> = found
            .iter()
            .filter(|(c, _)| c == "x.run")
            .map(|(_, r)| r.as_deref())
            .collect();
        assert_eq!(runs, [Some("A"), Some("B")]);
    }

    #[test]
    fn javascript_new_and_this_fields() {
        let src = "\
import { Hono } from './hono'
const app = new Hono()
app.get('/', (c) => c.text('hi'))

class Server {
  constructor() {
    this.router = new Router()
  }
  start() {
    this.router.match('/')
  }
}
";
        for path in ["index.js", "index.ts"] {
            let found = calls(path, src);
            assert_eq!(receiver(&found, "app.get"), Some("Hono"), "{path}");
            assert_eq!(
                receiver(&found, "this.router.match"),
                Some("Router"),
                "{path}"
            );
            assert_eq!(receiver(&found, "c.text"), None, "{path}");
        }
    }

    #[test]
    fn annotated_parameters_take_their_class() {
        let py = "\
def handle(app: Flask, n: int = 3, ctx: \"AppContext\" = None, other: Optional[flask.Flask] = None):
    app.run()
    n.bit_length()
    ctx.push()
    other.run()


def both(x: Flask | Quart):
    x.run()


current_app: Flask = LocalProxy(_find_app)


def view():
    current_app.log_exception()
";
        let found = calls("h.py", py);
        assert_eq!(receiver(&found, "app.run"), Some("Flask"));
        assert_eq!(receiver(&found, "n.bit_length"), None);
        assert_eq!(receiver(&found, "ctx.push"), Some("AppContext"));
        assert_eq!(receiver(&found, "other.run"), Some("flask.Flask"));
        // a union of two classes: either could be meant
        assert_eq!(receiver(&found, "x.run"), None);
        // the annotation of an assignment says more than its value
        assert_eq!(receiver(&found, "current_app.log_exception"), Some("Flask"));
        let ts = "\
function h(c: Context<Env>, next?: Next, x: number = 1) {
  c.text('x')
  next.call()
  x.toFixed()
}
";
        let found = calls("h.ts", ts);
        assert_eq!(receiver(&found, "c.text"), Some("Context"));
        assert_eq!(receiver(&found, "next.call"), Some("Next"));
        assert_eq!(receiver(&found, "x.toFixed"), None);
    }

    #[test]
    fn an_attribute_copied_from_a_typed_parameter_takes_its_class() {
        let src = "\
class AppContext:
    def __init__(self, app: Flask, other):
        self.app = app
        self.other = other

    def push(self):
        self.app.do_teardown()
        self.other.close()
";
        let found = calls("ctx.py", src);
        assert_eq!(receiver(&found, "self.app.do_teardown"), Some("Flask"));
        // a parameter without a type gives nothing
        assert_eq!(receiver(&found, "self.other.close"), None);
    }

    #[test]
    fn module_variables_of_one_class_are_exported() {
        let values = |path: &str, src: &str| -> Vec<(String, String)> {
            crate::parse_file(path, src, &Default::default())
                .values
                .into_iter()
                .map(|v| (v.name, v.class))
                .collect()
        };
        let py = "\
request: RequestProxy = LocalProxy(_cv, 'request')
app = Flask(__name__)
db = models.Database()
twice = A()
twice = B()
count = 0


def f():
    local = Session()
";
        assert_eq!(
            values("globals.py", py),
            [
                ("request".to_string(), "RequestProxy".to_string()),
                ("app".to_string(), "Flask".to_string()),
                ("db".to_string(), "models.Database".to_string()),
            ]
        );
        let ts = "export const app: Hono = createApp()\nconst client = new Client()\n";
        assert_eq!(
            values("app.ts", ts),
            [
                ("app".to_string(), "Hono".to_string()),
                ("client".to_string(), "Client".to_string()),
            ]
        );
    }

    #[test]
    fn members_read_or_written_but_not_called_are_reads() {
        let src = "\
class App:
    def run(self):
        self.hooks = []
        wrap(_async_wrapper=self.ensure_sync)
        env = self.jinja_env.filters
        self.dispatch()
        return app.config
";
        let syntax = crate::parse_file("a.py", src, &Default::default());
        let reads: Vec<String> = syntax
            .references
            .iter()
            .filter(|r| r.kind == ken_core::RefKind::Read)
            .map(|r| format!("{}.{}", r.qualifier.as_deref().unwrap_or(""), r.name))
            .collect();
        // `self.dispatch` is called, not read; `self.hooks` is written,
        // which is a use where it names a property (its setter)
        assert_eq!(
            reads,
            [
                "self.hooks",
                "self.ensure_sync",
                "self.jinja_env.filters",
                "self.jinja_env",
                "app.config"
            ]
        );
    }
}
