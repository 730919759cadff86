//! C `printf` number formatting that fio's output relies on.
//!
//! Rust's `{:.N}` rounds the exact binary value half-to-even, as glibc's `%f`
//! does, so only the non-finite spellings differ and are handled here.

/// `printf("%.*f", prec, x)`.
pub fn fixed(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    format!("{:.*}", prec, x)
}

/// `printf("%W.Pf", x)`: right-aligned in a field of at least `width` characters.
pub fn fixed_w(x: f64, width: usize, prec: usize) -> String {
    format!("{:>width$}", fixed(x, prec), width = width)
}

/// JSON float: fio prints every float with `"%f"` (six decimals).
pub fn json_f(x: f64) -> String {
    fixed(x, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_c_printf() {
        // Values checked against glibc printf.
        assert_eq!(fixed(0.125, 2), "0.12");
        assert_eq!(fixed(0.375, 2), "0.38");
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(99.99, 6), "99.990000");
        assert_eq!(fixed_w(0.0, 5, 2), " 0.00");
        assert_eq!(fixed_w(100.0, 3, 1), "100.0");
        assert_eq!(fixed(f64::NAN, 6), "nan");
        assert_eq!(fixed(f64::INFINITY, 6), "inf");
        assert_eq!(json_f(1.0 / 3.0), "0.333333");
    }
}
