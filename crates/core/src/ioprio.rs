//! The ioprio value (include/uapi/linux/ioprio.h): 3 bits of class, 10 bits of
//! hint and 3 bits of level packed into a u16.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ioprio(pub u16);

pub const IOPRIO_CLASS_SHIFT: u16 = 13;
pub const IOPRIO_HINT_SHIFT: u16 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoprioClass {
    None = 0,
    Rt = 1,
    Be = 2,
    Idle = 3,
    /// IOPRIO_CLASS_INVALID (7)
    Invalid = 7,
}

impl Ioprio {
    /// `IOPRIO_PRIO_VALUE_HINT(class, level, hint)`
    pub fn new(class: IoprioClass, level: u8, hint: u16) -> Ioprio {
        Ioprio(
            ((class as u16) << IOPRIO_CLASS_SHIFT)
                | ((hint & 0x3ff) << IOPRIO_HINT_SHIFT)
                | (level as u16 & 7),
        )
    }
    pub fn class(self) -> IoprioClass {
        match self.0 >> IOPRIO_CLASS_SHIFT {
            0 => IoprioClass::None,
            1 => IoprioClass::Rt,
            2 => IoprioClass::Be,
            3 => IoprioClass::Idle,
            _ => IoprioClass::Invalid,
        }
    }
    pub fn level(self) -> u8 {
        (self.0 & 7) as u8
    }
    pub fn hint(self) -> u16 {
        (self.0 >> IOPRIO_HINT_SHIFT) & 0x3ff
    }
}
