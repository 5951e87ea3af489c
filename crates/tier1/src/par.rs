//! A map over a slice on a few threads (at most the machine's parallelism, capped at 8), with the
//! results in the slice's order; short slices stay on the calling thread.

/// Fewer items than this are mapped on the calling thread.
const MIN_PARALLEL: usize = 64;

/// `items.iter().map(f)`, computed in contiguous chunks on up to 8 threads, in order.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    if threads == 1 || items.len() < MIN_PARALLEL {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_order() {
        let xs: Vec<u32> = (0..1000).collect();
        assert_eq!(
            super::map(&xs, |x| x * 2),
            xs.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(super::map(&xs[..3], |x| x + 1), vec![1, 2, 3]);
    }
}
