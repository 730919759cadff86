//! Running a shell command line for the tests' setup steps.

use std::process::Command;

/// Run `cmd` with `sh -c`; its trimmed stdout, or the command and its
/// stderr when it fails.
pub fn sh(cmd: &str) -> Result<String, String> {
    let o = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(format!(
            "`{cmd}`: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}
