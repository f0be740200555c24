//! Models named by their Hugging Face Hub id (`Qwen/Qwen3-32B`, `ORG/NAME@REVISION`): the
//! repository's `config.json`, fetched over HTTPS from `HF_ENDPOINT` (default
//! `https://huggingface.co`) with `HF_TOKEN` where one is set, and kept in the Hub's own cache
//! layout (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`:
//! `models--ORG--NAME/snapshots/COMMIT/config.json`, `refs/REVISION`). A file already there,
//! whichever tool put it, is read without the network; `HF_HUB_OFFLINE=1` never asks it.
//! A sharded checkpoint's `model.safetensors.index.json` is read the same way for the
//! parameters the checkpoint holds; a repository without one is remembered as huggingface_hub
//! does (`.no_exist/COMMIT/model.safetensors.index.json`) and costs no second request.

use gpuplan::Error;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `ORG/NAME` and the revision asked for (`main` unless `@REVISION` is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubId {
    pub repo: String,
    pub revision: String,
}

impl HubId {
    /// A Hub id as written on the command line; `None` for anything that is not one (a path,
    /// a built-in name, a bare size).
    pub fn parse(text: &str) -> Option<HubId> {
        let (repo, revision) = match text.split_once('@') {
            Some((repo, revision)) if !revision.is_empty() => (repo, revision),
            Some(_) => return None,
            None => (text, "main"),
        };
        let (org, name) = repo.split_once('/')?;
        let part = |s: &str| {
            !s.is_empty()
                && !s.starts_with('.')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        let revision_ok = revision
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
            && !revision.contains("..");
        (part(org) && part(name) && !name.ends_with(".json") && revision_ok).then(|| HubId {
            repo: repo.to_string(),
            revision: revision.to_string(),
        })
    }

    fn cache_folder(&self, cache: &Path) -> PathBuf {
        cache.join(format!("models--{}", self.repo.replace('/', "--")))
    }
}

/// Who asks for a Hub id, for its errors to speak their words: the field that named it (`--model`
/// on the command line, `model` in an API request) and the other way to give a model.
#[derive(Debug, Clone, Copy)]
pub struct Asker {
    pub field: &'static str,
    pub instead: &'static str,
}

impl Asker {
    pub const COMMAND_LINE: Asker = Asker {
        field: "--model",
        instead: "give the path of a config.json",
    };
    pub const API: Asker = Asker {
        field: "model",
        instead: "paste the config.json as model_config",
    };
}

/// Largest config.json read: real ones are a few kB.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);

const INDEX: &str = "model.safetensors.index.json";

/// The text of `id`'s config.json and, where the repository has one, of its safetensors
/// index: from the cache when they are there, else from the Hub (and then cached). The index is
/// optional: a repository without one, or a Hub that cannot be asked, leaves it out.
pub fn files(id: &HubId, asker: Asker) -> Result<(String, Option<String>), Error> {
    let cache = cache_root();
    let config = config(id, &cache, asker)?;
    let Some(commit) = commit_of(id, &cache) else {
        return Ok((config, None));
    };
    let snapshot = id.cache_folder(&cache).join("snapshots").join(&commit);
    if let Ok(index) = std::fs::read_to_string(snapshot.join(INDEX)) {
        return Ok((config, Some(index)));
    }
    let known_missing = id.cache_folder(&cache).join(".no_exist").join(&commit).join(INDEX);
    if offline() || known_missing.is_file() {
        return Ok((config, None));
    }
    let at_commit = HubId {
        repo: id.repo.clone(),
        revision: commit.clone(),
    };
    match fetch(&at_commit, INDEX, asker) {
        Ok((text, _)) => {
            let _ = std::fs::write(snapshot.join(INDEX), &text);
            Ok((config, Some(text)))
        }
        Err(Fetched::Missing) => {
            let _ = std::fs::create_dir_all(known_missing.parent().unwrap_or(&snapshot))
                .and_then(|()| std::fs::write(&known_missing, ""));
            Ok((config, None))
        }
        Err(Fetched::Failed(_)) => Ok((config, None)),
    }
}

/// The text of `id`'s config.json: from the cache when it is there, else from the Hub (and
/// then cached).
fn config(id: &HubId, cache: &Path, asker: Asker) -> Result<String, Error> {
    if let Some(text) = cached(id, cache) {
        return Ok(text);
    }
    if offline() {
        return Err(Error::invalid(
            format!(
                "{} {}: config.json is not in the Hugging Face cache ({}) and HF_HUB_OFFLINE is set",
                asker.field,
                id.repo,
                cache.display()
            ),
            Some(format!(
                "run once with the network (unset HF_HUB_OFFLINE), or {}",
                asker.instead
            )),
        ));
    }
    let (text, commit) = fetch(id, "config.json", asker).map_err(|failed| match failed {
        Fetched::Missing => Error::invalid(
            format!(
                "{} {}: no such repository, revision or config.json",
                asker.field, id.repo
            ),
            Some(
                "check the id as the Hub spells it (ORG/NAME), or give a built-in model (`gpuplan models`)".to_string(),
            ),
        ),
        Fetched::Failed(error) => error,
    })?;
    store(id, cache, &commit, &text);
    Ok(text)
}

/// The commit `id`'s revision names in the cache, where it is known.
fn commit_of(id: &HubId, cache: &Path) -> Option<String> {
    let commit = if is_commit(&id.revision) {
        id.revision.clone()
    } else {
        std::fs::read_to_string(id.cache_folder(cache).join("refs").join(&id.revision))
            .ok()?
            .trim()
            .to_string()
    };
    is_commit(&commit).then_some(commit)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn offline() -> bool {
    env("HF_HUB_OFFLINE").is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// Where the Hub's cache lives, as huggingface_hub looks for it.
fn cache_root() -> PathBuf {
    if let Some(path) = env("HF_HUB_CACHE") {
        return PathBuf::from(path);
    }
    if let Some(home) = env("HF_HOME") {
        return Path::new(&home).join("hub");
    }
    let base = env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("huggingface").join("hub")
}

/// The token huggingface_hub would send: `HF_TOKEN`, else the file `huggingface-cli login`
/// writes.
fn token() -> Option<String> {
    env("HF_TOKEN").or_else(|| {
        let home = env("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            env("HOME")
                .map(|h| Path::new(&h).join(".cache").join("huggingface"))
                .unwrap_or_default()
        });
        std::fs::read_to_string(home.join("token"))
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
    })
}

/// The cached config.json of `id`'s revision: a commit hash names its snapshot, a branch or
/// tag is looked up in `refs/`.
fn cached(id: &HubId, cache: &Path) -> Option<String> {
    let commit = commit_of(id, cache)?;
    let path = id
        .cache_folder(cache)
        .join("snapshots")
        .join(commit)
        .join("config.json");
    let metadata = std::fs::metadata(&path).ok()?;
    (metadata.len() <= MAX_CONFIG_BYTES)
        .then(|| std::fs::read_to_string(path).ok())
        .flatten()
}

fn is_commit(text: &str) -> bool {
    text.len() == 40 && text.chars().all(|c| c.is_ascii_hexdigit())
}

/// Keeps the file where huggingface_hub would find it. A cache that cannot be written only
/// costs the next run a download, so a failure here is not an error.
fn store(id: &HubId, cache: &Path, commit: &str, text: &str) {
    let folder = id.cache_folder(cache);
    let snapshot = folder.join("snapshots").join(commit);
    let written = std::fs::create_dir_all(&snapshot).and_then(|()| std::fs::write(snapshot.join("config.json"), text));
    if written.is_ok() && !is_commit(&id.revision) {
        let refs = folder.join("refs").join(&id.revision);
        if let Some(parent) = refs.parent() {
            let _ = std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&refs, commit));
        }
    }
}

/// Why a file did not come: the Hub has no such file (404), or anything else.
enum Fetched {
    Missing,
    Failed(Error),
}

impl From<Error> for Fetched {
    fn from(error: Error) -> Self {
        Fetched::Failed(error)
    }
}

/// GET `ENDPOINT/ORG/NAME/resolve/REVISION/FILE`: the text and the commit it came from (the
/// Hub's `X-Repo-Commit` header; a made-up one would not name a real snapshot, so a response
/// without it is cached under the revision only when that is a commit).
fn fetch(id: &HubId, file: &str, asker: Asker) -> Result<(String, String), Fetched> {
    let endpoint = env("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".to_string());
    let url = format!(
        "{}/{}/resolve/{}/{file}",
        endpoint.trim_end_matches('/'),
        id.repo,
        id.revision
    );
    let client = reqwest::blocking::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("gpuplan/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::invalid(format!("cannot start an HTTP client: {e}"), None))?;
    let mut request = client.get(&url);
    let token = token();
    if let Some(token) = &token {
        request = request.bearer_auth(token);
    }
    let shown = format!("{} {}: {url}", asker.field, id.repo);
    let response = request.send().map_err(|e| {
        Error::invalid(
            format!("{shown}: {}", crate::causes::chain(&e)),
            Some(format!("check the network (or HF_ENDPOINT), or {}", asker.instead)),
        )
    })?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        let hint = if token.is_some() {
            format!(
                "the token in HF_TOKEN has no access: accept the model's licence at https://huggingface.co/{} with that account",
                id.repo
            )
        } else {
            format!(
                "the model is gated or private: accept its licence at https://huggingface.co/{} and set HF_TOKEN (or run `huggingface-cli login`)",
                id.repo
            )
        };
        return Err(Error::invalid(format!("{shown}: {status}"), Some(hint)).into());
    }
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(Fetched::Missing);
    }
    if !status.is_success() {
        return Err(Error::invalid(format!("{shown}: {status}"), None).into());
    }
    let commit = response
        .headers()
        .get("x-repo-commit")
        .and_then(|v| v.to_str().ok())
        .filter(|c| is_commit(c))
        .map(str::to_string)
        .or_else(|| is_commit(&id.revision).then(|| id.revision.clone()));
    let mut text = String::new();
    response
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::invalid(format!("{shown}: reading the answer: {e}"), None))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::invalid(format!("{shown}: larger than 16 MiB, not a {file}"), None).into());
    }
    Ok((text, commit.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_are_told_from_paths_names_and_sizes() {
        let id = HubId::parse("Qwen/Qwen3-32B").unwrap();
        assert_eq!((id.repo.as_str(), id.revision.as_str()), ("Qwen/Qwen3-32B", "main"));
        let pinned = HubId::parse("meta-llama/Llama-3.1-8B@v1.0").unwrap();
        assert_eq!(pinned.revision, "v1.0");
        for not_an_id in [
            "llama-3.1-8b",
            "7b",
            "./config.json",
            "org/config.json",
            "a/b/c",
            "/abs",
            "org/",
            "../x",
            "org/name@",
        ] {
            assert_eq!(HubId::parse(not_an_id), None, "{not_an_id}");
        }
    }

    #[test]
    fn a_snapshot_is_found_by_branch_or_by_commit() {
        let cache = std::env::temp_dir().join(format!("gpuplan-hub-{}", std::process::id()));
        let id = HubId::parse("Org/Model").unwrap();
        assert_eq!(cached(&id, &cache), None);
        let commit = "0123456789abcdef0123456789abcdef01234567";
        store(&id, &cache, commit, "{\"model_type\": \"llama\"}");
        assert_eq!(cached(&id, &cache).as_deref(), Some("{\"model_type\": \"llama\"}"));
        let by_commit = HubId::parse(&format!("Org/Model@{commit}")).unwrap();
        assert!(cached(&by_commit, &cache).is_some());
        assert!(cached(&HubId::parse("Org/Model@other").unwrap(), &cache).is_none());
        std::fs::remove_dir_all(&cache).ok();
    }
}
