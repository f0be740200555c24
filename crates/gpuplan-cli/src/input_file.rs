//! Files the user names: read whole, but only regular files and only up to a size that no
//! real input reaches, with the flag named in every refusal.

use gpuplan::Error;
use std::path::Path;

/// Reads `path`, given with `flag`, refusing directories, special files and anything over
/// `max_bytes`.
pub fn read(flag: &str, path: &Path, max_bytes: u64, hint: &str) -> Result<String, Error> {
    let refuse =
        |message: String| Error::invalid(format!("{flag} {}: {message}", path.display()), Some(hint.to_string()));
    let metadata = std::fs::metadata(path).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    if !metadata.is_file() {
        return Err(refuse("is not a file".to_string()));
    }
    if metadata.len() > max_bytes {
        return Err(refuse(format!("is larger than {} MiB", max_bytes / 1024 / 1024)));
    }
    std::fs::read_to_string(path).map_err(|e| refuse(format!("cannot be read: {e}")))
}

/// Largest model config read: real ones are a few kB.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Largest request log read: tens of millions of requests.
pub const MAX_REQUEST_LOG_BYTES: u64 = 512 * 1024 * 1024;
/// Largest usage history read: a year of per-second rows is far less.
pub const MAX_HISTORY_BYTES: u64 = 512 * 1024 * 1024;
/// Largest price file read.
pub const MAX_PRICES_BYTES: u64 = 16 * 1024 * 1024;
