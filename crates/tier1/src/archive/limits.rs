//! The caps and fixed settings of every archive tier1 reads or writes (the reference's caps on
//! downloads, expanded bytes and members; the deflate level and member mode of written zips).

/// Reference cap on the downloaded archive (128 MiB).
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 128 * 1024 * 1024;
/// Reference cap on the expanded size, counted from decompressed bytes (64 MiB).
pub(crate) const MAX_EXPANDED_BYTES: u64 = 64 * 1024 * 1024;
/// Reference cap on the number of members.
pub const MAX_MEMBERS: usize = 10_000;
/// Prefixes the reference strips from history members (first match wins).
pub(crate) const HISTORY_PREFIXES: [&str; 3] = [
    "code/artifacts/history/tier1/",
    "artifacts/history/tier1/",
    "history/tier1/",
];
/// Deflate level of every written archive (zlib's default, as `actions/upload-artifact` uses).
pub(crate) const DEFLATE_LEVEL: i64 = 6;
/// Unix mode recorded for every written member.
pub(crate) const MEMBER_MODE: u32 = 0o644;
