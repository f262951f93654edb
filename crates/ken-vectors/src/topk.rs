//! Keeping the k best scores of a stream.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, PartialEq)]
struct Entry(f32, u32);

impl Eq for Entry {}

impl Ord for Entry {
    // reversed: the heap's top is the worst kept entry
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

impl TopK {
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    #[inline]
    pub fn push(&mut self, score: f32, row: u32) {
        if self.heap.len() < self.k {
            self.heap.push(Entry(score, row));
        } else if let Some(worst) = self.heap.peek()
            && score > worst.0
        {
            self.heap.pop();
            self.heap.push(Entry(score, row));
        }
    }

    pub fn merge(&mut self, other: TopK) {
        for e in other.heap {
            self.push(e.0, e.1);
        }
    }

    /// Best first.
    pub fn into_sorted(self) -> Vec<(f32, u32)> {
        let mut v: Vec<(f32, u32)> = self.heap.into_iter().map(|e| (e.0, e.1)).collect();
        v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best() {
        let mut t = TopK::new(3);
        for (i, s) in [0.1, 0.9, 0.5, 0.7, 0.2, 0.8].iter().enumerate() {
            t.push(*s, i as u32);
        }
        assert_eq!(t.into_sorted(), vec![(0.9, 1), (0.8, 5), (0.7, 3)]);
    }
}
