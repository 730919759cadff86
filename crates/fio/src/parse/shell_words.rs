//! A command line given as one string, split into arguments the way a POSIX
//! shell splits a simple command.

use super::CMDLINE;
use crate::error::FioError;

/// Split one string into arguments like a POSIX shell would for a simple
/// command: whitespace separates words; single quotes keep everything literal;
/// double quotes keep whitespace and allow `\"`, `\\`, `\$` and `` \` ``;
/// outside quotes a backslash escapes the next character. No expansion.
pub fn split_cmdline(s: &str) -> Result<Vec<String>, FioError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => {
                            return Err(FioError::general(CMDLINE, "unterminated single quote"))
                        }
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                                cur.push(n);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(x) => cur.push(x),
                        None => {
                            return Err(FioError::general(CMDLINE, "unterminated double quote"))
                        }
                    }
                }
            }
            '\\' => match chars.next() {
                // line continuation: not part of any word
                Some('\n') => {}
                Some(x) => {
                    in_word = true;
                    cur.push(x);
                }
                None => return Err(FioError::general(CMDLINE, "trailing backslash")),
            },
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}
