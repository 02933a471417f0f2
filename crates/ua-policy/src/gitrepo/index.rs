//! The submodules a repository's index records (its gitlinks), read from
//! the index file itself (`Documentation/gitformat-index.txt`, versions 2
//! to 4). `git status` and `git diff` run `git status` inside every
//! checked-out gitlink, and that git reads the submodule's own
//! configuration; `.gitmodules` is not the list git goes by, the index is.

/// Mode bits of a gitlink entry (S_IFGITLINK).
const GITLINK: u32 = 0o160000;
const MODE_MASK: u32 = 0o170000;
/// Entry flag: two more flag bytes follow (version 3 and later).
const EXTENDED: u16 = 0x4000;
/// Entry flag bits holding the name's length (0xFFF: look for the NUL).
const NAME_MASK: u16 = 0x0FFF;

/// What an index holds that matters here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gitlinks {
    /// Paths of gitlink entries, relative to the top of the work tree.
    pub paths: Vec<String>,
    /// The hex name of the shared index (`sharedindex.<hex>`) when this is
    /// a split index, whose other entries live in that file.
    pub shared: Option<String>,
}

/// Reads an index file; `hash_len` is 20 (SHA-1) or 32 (SHA-256).
pub fn gitlinks(data: &[u8], hash_len: usize) -> Result<Gitlinks, String> {
    let bad = |what: &str| Err(format!("the index is not in a format unixagent reads ({what})"));
    if data.len() < 12 + hash_len || &data[..4] != b"DIRC" {
        return bad("no DIRC header");
    }
    let version = be32(data, 4);
    if !(2..=4).contains(&version) {
        return bad("unknown version");
    }
    let count = be32(data, 8) as usize;
    let end = data.len() - hash_len;
    let mut pos = 12;
    let mut out = Gitlinks::default();
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let fixed = 40 + hash_len + 2;
        if pos + fixed > end {
            return bad("truncated entry");
        }
        let mode = be32(data, pos + 24);
        let flags = u16::from_be_bytes([data[pos + fixed - 2], data[pos + fixed - 1]]);
        let mut name_at = pos + fixed;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return bad("extended flags in version 2");
            }
            name_at += 2;
        }
        let name: Vec<u8>;
        if version == 4 {
            let Some((strip, used)) = varint(&data[name_at.min(end)..end]) else {
                return bad("bad path prefix");
            };
            let Some(nul) = data[name_at + used..end].iter().position(|&b| b == 0) else {
                return bad("unterminated path");
            };
            let Some(keep) = prev.len().checked_sub(strip) else {
                return bad("bad path prefix");
            };
            let mut n = prev[..keep].to_vec();
            n.extend_from_slice(&data[name_at + used..name_at + used + nul]);
            name = n;
            pos = name_at + used + nul + 1;
        } else {
            let len = match flags & NAME_MASK {
                NAME_MASK => match data[name_at.min(end)..end].iter().position(|&b| b == 0) {
                    Some(n) => n,
                    None => return bad("unterminated path"),
                },
                n => usize::from(n),
            };
            if name_at + len > end {
                return bad("truncated path");
            }
            name = data[name_at..name_at + len].to_vec();
            // Entries are padded with NULs to a multiple of eight bytes.
            pos += (name_at - pos + len + 8) & !7;
        }
        if mode & MODE_MASK == GITLINK {
            out.paths.push(String::from_utf8_lossy(&name).into_owned());
        }
        prev = name;
    }
    // Extensions: a four-byte signature and a four-byte size each.
    while pos + 8 <= end {
        let size = be32(data, pos + 4) as usize;
        if &data[pos..pos + 4] == b"link" && size >= hash_len && pos + 8 + hash_len <= end {
            let hex: String = data[pos + 8..pos + 8 + hash_len].iter().map(|b| format!("{b:02x}")).collect();
            out.shared = Some(hex);
        }
        pos = pos.saturating_add(8).saturating_add(size);
    }
    Ok(out)
}

fn be32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// git's offset varint (`varint.c`): returns the value and its length.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = usize::from(c & 127);
    while c & 128 != 0 {
        i += 1;
        c = *b.get(i)?;
        val = val.checked_add(1)?.checked_mul(128)?.checked_add(usize::from(c & 127))?;
    }
    Some((val, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index as git writes it, for the given version and entries.
    fn index(version: u32, entries: &[(&str, u32)]) -> Vec<u8> {
        let mut d = b"DIRC".to_vec();
        d.extend(version.to_be_bytes());
        d.extend((entries.len() as u32).to_be_bytes());
        let mut prev = String::new();
        for (name, mode) in entries {
            let start = d.len();
            d.extend([0u8; 24]);
            d.extend(mode.to_be_bytes());
            d.extend([0u8; 12]);
            d.extend([0xabu8; 20]);
            d.extend((name.len().min(0xFFF) as u16).to_be_bytes());
            if version == 4 {
                let common = prev.bytes().zip(name.bytes()).take_while(|(a, b)| a == b).count();
                d.push((prev.len() - common) as u8);
                d.extend(&name.as_bytes()[common..]);
                d.push(0);
            } else {
                d.extend(name.as_bytes());
                let len = d.len() - start;
                d.extend(std::iter::repeat_n(0u8, 8 - len % 8));
            }
            prev = name.to_string();
        }
        d.extend([0u8; 20]);
        d
    }

    #[test]
    fn gitlinks_in_every_version() {
        let entries = [("README.md", 0o100644), ("vendor/lib", 0o160000), ("vendor/lib2", 0o160000), ("x", 0o120000)];
        for v in [2, 3, 4] {
            let g = gitlinks(&index(v, &entries), 20).unwrap();
            assert_eq!(g.paths, ["vendor/lib", "vendor/lib2"], "version {v}");
            assert_eq!(g.shared, None);
        }
    }

    #[test]
    fn a_split_index_names_its_shared_file() {
        let mut d = index(2, &[("a", 0o100644)]);
        let at = d.len() - 20;
        let mut ext = b"link".to_vec();
        ext.extend(20u32.to_be_bytes());
        ext.extend([0x12u8; 20]);
        d.splice(at..at, ext);
        assert_eq!(gitlinks(&d, 20).unwrap().shared.as_deref(), Some("1212121212121212121212121212121212121212"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(gitlinks(b"", 20).is_err());
        assert!(gitlinks(b"DIRC\0\0\0\x05\0\0\0\0", 20).is_err());
        let mut d = index(2, &[("vendor/lib", 0o160000)]);
        d.truncate(40);
        assert!(gitlinks(&d, 20).is_err());
        let mut d = index(4, &[("a", 0o100644)]);
        d[12 + 62] = 9; // strips more than the previous path holds
        assert!(gitlinks(&d, 20).is_err());
        // Claims a million entries.
        let mut d = index(2, &[("a", 0o100644)]);
        d[8..12].copy_from_slice(&1_000_000u32.to_be_bytes());
        assert!(gitlinks(&d, 20).is_err());
    }

    #[test]
    fn varints_as_git_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
