//! A private apt configuration for fetching one suite's kernel package
//! without touching the host's apt state.
//!
//! The mirror and keyring are not written anywhere in this crate: they are
//! read at run time from the host's own apt sources (deb822 `*.sources` files
//! in /etc/apt/sources.list.d and one-line `sources.list` entries, the two
//! formats described in sources.list(5)). The entry that serves the host's own
//! release gives the archive URI, the `*-security` entry the security URI;
//! both keep the host's `Signed-By`. The private configuration has its own
//! sources file, lists, cache and state directories, all under the kernel
//! cache, and is passed to apt-get with `-o Dir::…` options.

use std::path::{Path, PathBuf};

use crate::error::{Result, VmError};

/// One enabled `deb` entry of the host's apt sources (one URI, its suites).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSource {
    pub uri: String,
    pub suites: Vec<String>,
    /// The `Signed-By` value as written (a keyring path, or an inline key
    /// block whose continuation lines are kept verbatim).
    pub signed_by: Option<String>,
}

/// Parse deb822 `.sources` text (sources.list(5), "DEB822-STYLE FORMAT").
pub fn parse_deb822(text: &str) -> Vec<HostSource> {
    let mut out = Vec::new();
    for para in paragraphs(text) {
        let get = |k: &str| {
            para.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.clone())
        };
        let types = get("Types").unwrap_or_default();
        if !types.split_whitespace().any(|t| t == "deb") {
            continue;
        }
        if get("Enabled").is_some_and(|e| e.trim().eq_ignore_ascii_case("no")) {
            continue;
        }
        let suites: Vec<String> = get("Suites")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
        let signed_by = get("Signed-By").map(|s| s.trim_end().to_string());
        for uri in get("URIs").unwrap_or_default().split_whitespace() {
            out.push(HostSource {
                uri: uri.to_string(),
                suites: suites.clone(),
                signed_by: signed_by.clone(),
            });
        }
    }
    out
}

/// Split deb822 text into paragraphs of (field, value); continuation lines
/// (starting with a space or tab) are appended to the value with a newline.
fn paragraphs(text: &str) -> Vec<Vec<(String, String)>> {
    let mut paras = Vec::new();
    let mut cur: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.is_empty() {
                paras.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            if let Some((_, v)) = cur.last_mut() {
                v.push('\n');
                v.push_str(line);
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            cur.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    if !cur.is_empty() {
        paras.push(cur);
    }
    paras
}

/// Parse one-line `sources.list` text: `deb [options] URI SUITE [COMPONENT…]`.
pub fn parse_one_line(text: &str) -> Vec<HostSource> {
    let mut out = Vec::new();
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let Some(rest) = line
            .strip_prefix("deb ")
            .or_else(|| line.strip_prefix("deb\t"))
        else {
            continue;
        };
        let rest = rest.trim_start();
        let (opts, rest) = match rest.strip_prefix('[') {
            Some(r) => match r.split_once(']') {
                Some((o, tail)) => (o, tail),
                None => continue,
            },
            None => ("", rest),
        };
        let mut words = rest.split_whitespace();
        let (Some(uri), Some(suite)) = (words.next(), words.next()) else {
            continue;
        };
        let signed_by = opts
            .split_whitespace()
            .find_map(|o| o.strip_prefix("signed-by="))
            .map(String::from);
        out.push(HostSource {
            uri: uri.to_string(),
            suites: vec![suite.to_string()],
            signed_by,
        });
    }
    out
}

/// Read the host's apt sources: every `*.sources` file in `etc_apt/sources.list.d`
/// and the one-line `sources.list` and `sources.list.d/*.list` files.
pub fn read_host_sources(etc_apt: &Path) -> Vec<HostSource> {
    let mut out = Vec::new();
    if let Ok(t) = std::fs::read_to_string(etc_apt.join("sources.list")) {
        out.extend(parse_one_line(&t));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(etc_apt.join("sources.list.d"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    for f in files {
        let Ok(t) = std::fs::read_to_string(&f) else {
            continue;
        };
        match f.extension().and_then(|e| e.to_str()) {
            Some("sources") => out.extend(parse_deb822(&t)),
            Some("list") => out.extend(parse_one_line(&t)),
            _ => {}
        }
    }
    out
}

/// The host's Debian mirrors: where its own release and its security
/// updates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirrors {
    pub archive: HostSource,
    pub security: Option<HostSource>,
}

/// A release suite without the `-updates`/`-security`/`-backports`… suffix.
fn is_release_suite(s: &str) -> bool {
    !s.contains('-') && !s.contains('/')
}

/// Pick the archive and security entries. `host_codename` (from
/// /etc/os-release) is preferred; without it any release suite will do.
pub fn mirrors(sources: &[HostSource], host_codename: Option<&str>) -> Option<Mirrors> {
    let archive = sources
        .iter()
        .find(|s| host_codename.is_some_and(|c| s.suites.iter().any(|x| x == c)))
        .or_else(|| {
            sources
                .iter()
                .find(|s| s.suites.iter().any(|x| is_release_suite(x)))
        })?
        .clone();
    let security = sources
        .iter()
        .find(|s| s.suites.iter().any(|x| x.ends_with("-security")))
        .cloned();
    Some(Mirrors { archive, security })
}

/// The host's release codename (`VERSION_CODENAME` of os-release(5)).
pub fn host_codename(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|l| {
        l.strip_prefix("VERSION_CODENAME=")
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    })
}

fn stanza(uri: &str, suites: &str, signed_by: Option<&str>) -> String {
    let mut s = format!("Types: deb\nURIs: {uri}\nSuites: {suites}\nComponents: main\n");
    if let Some(k) = signed_by {
        // An inline key keeps its continuation lines as they were.
        s.push_str(&format!("Signed-By: {k}\n"));
    }
    s
}

/// The private deb822 sources for `suite`: its release and `-updates` suites
/// from the host's archive mirror, `-security` from its security mirror.
pub fn private_sources(m: &Mirrors, suite: &str) -> String {
    let mut s = String::from(
        "# Written by blklab-vm: the host's own mirrors and keyrings, another suite.\n",
    );
    s.push_str(&stanza(
        &m.archive.uri,
        &format!("{suite} {suite}-updates"),
        m.archive.signed_by.as_deref(),
    ));
    if let Some(sec) = &m.security {
        s.push('\n');
        s.push_str(&stanza(
            &sec.uri,
            &format!("{suite}-security"),
            sec.signed_by.as_deref(),
        ));
    }
    s
}

/// A private apt configuration rooted at one directory.
#[derive(Debug, Clone)]
pub struct PrivateApt {
    pub root: PathBuf,
}

impl PrivateApt {
    /// Create the directory layout and write the sources file.
    pub fn create(root: &Path, sources: &str) -> Result<Self> {
        for d in [
            "sources.list.d",
            "preferences.d",
            "lists/partial",
            "cache/archives/partial",
            "state",
        ] {
            let p = root.join(d);
            std::fs::create_dir_all(&p)
                .map_err(|e| VmError::io(format!("creating {}", p.display()), e))?;
        }
        let write = |name: &str, text: &str| {
            let p = root.join(name);
            std::fs::write(&p, text).map_err(|e| VmError::io(format!("writing {}", p.display()), e))
        };
        write("sources.list", "")?;
        write("sources.list.d/blklab.sources", sources)?;
        Ok(PrivateApt {
            root: root.to_path_buf(),
        })
    }

    /// The `-o` options that point apt at this configuration only. The
    /// host's apt.conf.d is still read (proxies live there); its sources,
    /// pinning, lists and caches are not used.
    pub fn options(&self, as_root: bool) -> Vec<String> {
        let r = |p: &str| self.root.join(p).display().to_string();
        let mut o = vec![
            format!("Dir::Etc::SourceList={}", r("sources.list")),
            format!("Dir::Etc::SourceParts={}", r("sources.list.d")),
            format!("Dir::Etc::Preferences={}", r("preferences")),
            format!("Dir::Etc::PreferencesParts={}", r("preferences.d")),
            format!("Dir::State={}", r("state")),
            format!("Dir::State::Lists={}", r("lists")),
            "Dir::State::status=/var/lib/dpkg/status".to_string(),
            format!("Dir::Cache={}", r("cache")),
            // Only the Packages indices are needed.
            "Acquire::Languages=none".to_string(),
            "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".to_string(),
            "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false".to_string(),
            "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false".to_string(),
            "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false".to_string(),
        ];
        if as_root {
            // The private directories belong to root; apt's _apt sandbox user
            // could not write them (and would warn).
            o.push("APT::Sandbox::User=root".to_string());
        }
        o.into_iter().flat_map(|x| ["-o".to_string(), x]).collect()
    }

    /// `apt-get <options> update --error-on=any` and
    /// `apt-get <options> download PACKAGE=VERSION`, as text a person can run.
    pub fn fetch_command_text(&self, as_root: bool, package: &str, version: &str) -> String {
        let opts = self.options(as_root).join(" ");
        format!(
            "apt-get {opts} update --error-on=any && apt-get {opts} download {package}={version}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEB822: &str = "\
Types: deb
# a comment
URIs: http://mirror.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://mirror.invalid/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://mirror.invalid/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://other.invalid/disabled
Suites: bookworm
Components: main
Enabled: no
";

    #[test]
    fn deb822_entries_keep_uri_suites_and_keyring() {
        let s = parse_deb822(DEB822);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].uri, "http://mirror.invalid/debian");
        assert_eq!(s[0].suites, ["bookworm", "bookworm-updates"]);
        assert_eq!(
            s[0].signed_by.as_deref(),
            Some("/usr/share/keyrings/debian-archive-keyring.gpg")
        );
        assert_eq!(s[1].suites, ["bookworm-security"]);
    }

    #[test]
    fn one_line_entries_with_options() {
        let s = parse_one_line(
            "deb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian bookworm main # x\n\
             # deb http://commented.invalid/debian bookworm main\n\
             deb-src http://mirror.invalid/debian bookworm main\n\
             deb http://mirror.invalid/debian-security bookworm-security main\n",
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].signed_by.as_deref(), Some("/k.gpg"));
        assert_eq!(s[0].suites, ["bookworm"]);
        assert_eq!(s[1].uri, "http://mirror.invalid/debian-security");
        assert_eq!(s[1].signed_by, None);
    }

    #[test]
    fn private_trixie_sources_from_a_bookworm_host() {
        let m = mirrors(&parse_deb822(DEB822), Some("bookworm")).unwrap();
        let text = private_sources(&m, "trixie");
        assert_eq!(
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>(),
            [
                "Types: deb",
                "URIs: http://mirror.invalid/debian",
                "Suites: trixie trixie-updates",
                "Components: main",
                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
                "",
                "Types: deb",
                "URIs: http://mirror.invalid/debian-security",
                "Suites: trixie-security",
                "Components: main",
                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
            ]
        );
        // What was generated parses back to the same mirrors.
        let back = parse_deb822(&text);
        assert_eq!(back[0].suites, ["trixie", "trixie-updates"]);
        assert_eq!(back[1].uri, m.security.unwrap().uri);
    }

    #[test]
    fn inline_keys_survive_verbatim() {
        let src = "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\nComponents: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n -----END PGP PUBLIC KEY BLOCK-----\n";
        let m = mirrors(&parse_deb822(src), None).unwrap();
        let text = private_sources(&m, "trixie");
        assert!(text.contains("Signed-By: \n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n"));
        assert_eq!(parse_deb822(&text)[0].signed_by, m.archive.signed_by);
    }

    #[test]
    fn no_debian_release_entry_means_no_mirrors() {
        let s =
            parse_one_line("deb http://mirror.invalid/debian-security bookworm-security main\n");
        assert_eq!(mirrors(&s, Some("bookworm")), None);
        assert_eq!(mirrors(&[], None), None);
    }

    #[test]
    fn codename_from_os_release() {
        assert_eq!(
            host_codename("NAME=\"Debian GNU/Linux\"\nVERSION_CODENAME=bookworm\n").as_deref(),
            Some("bookworm")
        );
        assert_eq!(host_codename("ID=debian\n"), None);
    }

    #[test]
    fn private_layout_and_options_point_only_inside_root() {
        let dir = tempfile::tempdir().unwrap();
        let apt = PrivateApt::create(dir.path(), "Types: deb\n").unwrap();
        assert!(dir.path().join("lists/partial").is_dir());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sources.list.d/blklab.sources")).unwrap(),
            "Types: deb\n"
        );
        let o = apt.options(true);
        for (i, w) in o.iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!(w, "-o");
            } else if w.starts_with("Dir::") && !w.starts_with("Dir::State::status") {
                let path = w.split_once('=').unwrap().1;
                assert!(path.starts_with(&dir.path().display().to_string()), "{w}");
            }
        }
        assert!(o.contains(&"APT::Sandbox::User=root".to_string()));
        assert!(!apt
            .options(false)
            .contains(&"APT::Sandbox::User=root".to_string()));
        let cmd = apt.fetch_command_text(false, "linux-image-x", "1.0-1");
        assert!(cmd.contains("download linux-image-x=1.0-1"));
    }
}
