//! The search itself, free of git and of measuring: candidates `0..n` are the commits after the
//! good one up to the bad one (oldest first; the last is bad by assumption, the good commit lies
//! before index 0). Each test marks a candidate good, bad or skipped; the next candidate is the
//! untested, unskipped one nearest the middle of the open range, so every answer halves it.

use std::collections::BTreeSet;

/// What a tested candidate turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Shows the change (the comparison with the good commit is `worse`).
    Bad,
    /// Does not show it (`same`).
    Good,
    /// Could not be built, run or decided (`unknown`).
    Skip,
}

/// The state of a search over `n` candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Search {
    /// Index of the newest candidate known good, `None` while only the good commit is.
    good: Option<usize>,
    /// Index of the oldest candidate known bad.
    bad: usize,
    skipped: BTreeSet<usize>,
}

impl Search {
    /// A search over `n >= 1` candidates, the last bad.
    pub(crate) fn new(n: usize) -> Search {
        Search {
            good: None,
            bad: n.saturating_sub(1),
            skipped: BTreeSet::new(),
        }
    }

    /// The open range: candidates that may still be the first bad one, oldest first.
    fn open(&self) -> std::ops::Range<usize> {
        self.good.map_or(0, |g| g + 1)..self.bad
    }

    /// The candidate to test next, `None` when the search is over.
    pub(crate) fn next(&self) -> Option<usize> {
        let open = self.open();
        if open.is_empty() {
            return None;
        }
        // The middle of the possible first-bad positions `open.start..=bad`.
        let middle = open.start + (self.bad - open.start) / 2;
        open.filter(|i| !self.skipped.contains(i))
            .min_by_key(|i| (i.abs_diff(middle), *i))
    }

    /// Record what candidate `i` is.
    pub(crate) fn mark(&mut self, i: usize, mark: Mark) {
        if !self.open().contains(&i) {
            return;
        }
        match mark {
            Mark::Bad => self.bad = i,
            Mark::Good => self.good = Some(i),
            Mark::Skip => {
                self.skipped.insert(i);
            }
        }
    }

    /// The candidates the first bad commit may be, oldest first: one when the search found it,
    /// more when skipped candidates leave it open.
    pub(crate) fn suspects(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.open().filter(|i| self.skipped.contains(i)).collect();
        s.push(self.bad);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run a search where candidates at or after `culprit` are bad and those in `skip` cannot be
    /// tested; returns (tests, suspects).
    fn run(n: usize, culprit: usize, skip: &[usize]) -> (usize, Vec<usize>) {
        let mut s = Search::new(n);
        let mut tests = 0;
        while let Some(i) = s.next() {
            tests += 1;
            assert!(tests <= n, "the search must end");
            let m = if skip.contains(&i) {
                Mark::Skip
            } else if i >= culprit {
                Mark::Bad
            } else {
                Mark::Good
            };
            s.mark(i, m);
        }
        (tests, s.suspects())
    }

    #[test]
    fn every_culprit_of_fifteen_candidates_is_found_in_four_tests() {
        for culprit in 0..15 {
            let (tests, suspects) = run(15, culprit, &[]);
            assert_eq!(suspects, [culprit]);
            assert!(tests <= 4, "culprit {culprit}: {tests} tests");
        }
        for n in 1..70usize {
            let bound = (n as f64).log2().ceil() as usize;
            for culprit in 0..n {
                let (tests, suspects) = run(n, culprit, &[]);
                assert_eq!(suspects, [culprit], "n {n}");
                assert!(tests <= bound, "n {n} culprit {culprit}: {tests} > {bound}");
            }
        }
    }

    #[test]
    fn skipped_candidates_are_stepped_around_or_left_as_suspects() {
        // The middle commit cannot be built: the search steps around it and still finds the
        // culprit exactly.
        let (_, suspects) = run(15, 11, &[7]);
        assert_eq!(suspects, [11]);
        // The culprit's parent cannot be built: either may be the first bad one.
        let (_, suspects) = run(15, 7, &[6]);
        assert_eq!(suspects, [6, 7]);
        // The culprit itself cannot be built: it and the first bad after it remain.
        let (_, suspects) = run(15, 7, &[7]);
        assert_eq!(suspects, [7, 8]);
        // Nothing can be tested: every candidate is a suspect.
        let (tests, suspects) = run(4, 2, &[0, 1, 2]);
        assert_eq!((tests, suspects), (3, vec![0, 1, 2, 3]));
        // One candidate (the bad commit itself): nothing to test.
        assert_eq!(run(1, 0, &[]), (0, vec![0]));
    }
}
