//! fio's number-to-text conversion for the normal output (fio `lib/num2str.c`,
//! `num2str()`): scale by 1000 or 1024 until the integer part fits in
//! `maxlen` digits, then use the room left for decimals, rounding by carry.

/// The unit appended after the prefix (fio `enum n2s_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    PerSec,
    Byte,
    Bit,
    BytePerSec,
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::PerSec => "/s",
            Unit::Byte => "B",
            Unit::Bit => "bit",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

fn ndigits(n: u64) -> usize {
    let mut d = 1;
    let mut n = n / 10;
    while n > 0 {
        d += 1;
        n /= 10;
    }
    d
}

/// fio's `num2str(num, maxlen, base, pow2, units)`.
///
/// * `maxlen`: digits allowed for the number, the decimal point included.
/// * `base`: what one unit of `num` is worth (1, or 1024 for a number already in KiB).
/// * `pow2`: IEC prefixes and steps of 1024 instead of SI and 1000.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, units: Unit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };

    // Each factor of `thousand` in `base` moves the starting prefix up one step.
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }

    let mut num = match units {
        Unit::Bit | Unit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };

    // Divide until the integer part fits, remembering the last remainder.
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if ndigits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }

    let m = match modulo {
        None => return format!("{}{}{}", num, prefixes[post], units.suffix()),
        Some(m) => m,
    };

    // No room for a decimal point and at least one decimal: round by carry.
    let room = maxlen as i64 - ndigits(num) as i64;
    if room <= 1 {
        if carry {
            num += 1;
        }
        return format!("{}{}{}", num, prefixes[post], units.suffix());
    }

    let decimals = (room - 1) as usize;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{}.{}{}{}", num, &frac[2..], prefixes[post], units.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_unittest_cases() {
        // fio's own unittests/lib/num2str.c table.
        assert_eq!(num2str(1, 1, 1, false, Unit::None), "1");
        assert_eq!(
            num2str(u64::MAX, 99, 1, false, Unit::None),
            "18446744073709551615"
        );
        assert_eq!(num2str(18446744073709551, 2, 1, false, Unit::None), "18P");
        assert_eq!(num2str(18446744073709551, 4, 1, false, Unit::None), "18.4P");
        assert_eq!(num2str(u64::MAX, 2, 1, false, Unit::None), "18E");
        assert_eq!(num2str(u64::MAX, 4, 1, false, Unit::None), "18.4E");
    }

    #[test]
    fn output_examples() {
        // IOPS= (spec example and the seed 003 run)
        assert_eq!(num2str(44588, 4, 1, false, Unit::None), "44.6k");
        assert_eq!(num2str(139193, 4, 1, false, Unit::None), "139k");
        assert_eq!(num2str(100, 4, 1, false, Unit::None), "100");
        // BW=400KiB/s (410kB/s)(23.4MiB/60005msec): 6001 IOs of 4 KiB in 60005 ms
        let io = 6001u64 * 4096;
        let bw = 1000 * io / 60005;
        assert_eq!(num2str(bw, 4, 1, true, Unit::BytePerSec), "400KiB/s");
        assert_eq!(num2str(bw, 4, 1, false, Unit::BytePerSec), "410kB/s");
        assert_eq!(num2str(io, 4, 1, true, Unit::Byte), "23.4MiB");
        // block sizes in the job header line
        assert_eq!(num2str(4096, 4, 1, true, Unit::Byte), "4096B");
        assert_eq!(num2str(65536, 4, 1, true, Unit::Byte), "64.0KiB");
        assert_eq!(num2str(1 << 20, 4, 1, true, Unit::Byte), "1024KiB");
        // slat/clat min/max (6 significant figures)
        assert_eq!(num2str(969669, 6, 1, false, Unit::None), "969669");
        assert_eq!(num2str(30_263_123, 6, 1, false, Unit::None), "30263k");
        // carry into the integer part when the decimals round up
        assert_eq!(num2str(1999, 3, 1, false, Unit::None), "2.0k");
        assert_eq!(num2str(19_996, 4, 1, false, Unit::None), "20.0k");
        // bits
        assert_eq!(num2str(1000, 4, 1, false, Unit::BitPerSec), "8000bit/s");
        // base 1024: the number is already in KiB
        assert_eq!(num2str(2048, 4, 1024, true, Unit::Byte), "2048KiB");
    }
}
