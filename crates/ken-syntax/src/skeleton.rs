//! Skeletons: a large class (impl, trait, namespace...) stored as its header,
//! fields and member signatures, with member bodies elided.

use std::ops::Range;

use crate::lines::LineIndex;

/// A skeleton's text and, for each of its lines, the original lines it stands for.
pub(crate) struct Skeleton {
    pub text: String,
    /// 0-based original (first, last) line of each skeleton line.
    pub lines: Vec<(usize, usize)>,
}

/// `text[range]` with each body in `elide` (sorted, disjoint, inside
/// `range`) replaced by `{ ... }` (brace bodies) or `...` (Python, Ruby).
pub(crate) fn build(
    text: &str,
    li: &LineIndex,
    range: Range<usize>,
    elide: &[Range<usize>],
) -> Skeleton {
    let first = li.line_of(range.start);
    let mut sk = Skeleton {
        text: String::with_capacity(4096),
        lines: vec![(first, first)],
    };
    let mut cursor = range.start;
    for body in elide {
        if body.start < cursor || body.end > range.end {
            continue;
        }
        copy(&mut sk, text, cursor..body.start);
        let placeholder = if text[body.clone()].starts_with('{') {
            "{ ... }"
        } else {
            "..."
        };
        sk.text.push_str(placeholder);
        let last = li.line_of(body.end.saturating_sub(1).max(body.start));
        if let Some(l) = sk.lines.last_mut() {
            l.1 = l.1.max(last);
        }
        cursor = body.end;
    }
    copy(&mut sk, text, cursor..range.end);
    sk
}

fn copy(sk: &mut Skeleton, text: &str, range: Range<usize>) {
    let part = &text[range];
    for (i, line) in part.split('\n').enumerate() {
        if i > 0 {
            sk.text.push('\n');
            let next = sk.lines.last().map_or(0, |l| l.1 + 1);
            sk.lines.push((next, next));
        }
        sk.text.push_str(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_elided_and_lines_mapped() {
        let text = "impl Foo {\n    fn a(&self) {\n        1\n    }\n    fn b() {}\n}\n";
        let li = LineIndex::new(text);
        let a = text.find("{\n        1").unwrap();
        let a_end = text.find("    }\n").unwrap() + 5;
        let b = text.find("{}").unwrap();
        let sk = build(text, &li, 0..text.len() - 1, &[a..a_end, b..b + 2]);
        assert_eq!(
            sk.text,
            "impl Foo {\n    fn a(&self) { ... }\n    fn b() { ... }\n}"
        );
        assert_eq!(sk.lines, [(0, 0), (1, 3), (4, 4), (5, 5)]);
    }

    #[test]
    fn indentation_bodies_use_dots() {
        let text = "class A:\n    def f(self):\n        return 1\n";
        let li = LineIndex::new(text);
        let body = text.find("return").unwrap();
        let sk = build(
            text,
            &li,
            0..text.len() - 1,
            std::slice::from_ref(&(body..text.len() - 1)),
        );
        assert_eq!(sk.text, "class A:\n    def f(self):\n        ...");
    }
}
