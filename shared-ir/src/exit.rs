//! Why a µop program (or a chain of them) handed control back to its driver.
//! Shared by the reference interpreter and E1 so their exits compare directly.
//! It owns the vocabulary only.

/// The reason of an exit. In every case the guest state (vregs, flags, clock,
/// memory) is exact at an instruction boundary, and [`Exit::ip`] is the guest
/// instruction pointer to resume at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitReason {
    /// The budget cannot cover the next block: a finer engine must run the
    /// instructions up to the exact dispatch.
    Budget,
    /// Let a finer tier run exactly the instruction at `ip` (not expressible
    /// in µops, a refused access, a helper fault).
    Fallback,
    /// The program ended by itself with nothing owed.
    Stop,
    /// A store wrote into code; invalidate, then resume at `ip`.
    Smc,
    /// A device or service asked for a stop after its instruction.
    Service,
    /// The program ran an STI that opened the interrupt shadow (IF was 0):
    /// the instruction at `ip` must run next, alone, with no interrupt taken
    /// before it, and the driver looks after it (as after L1's STI).
    Shadow,
    /// A static exit to the program with this key was not taken (not linked,
    /// or the engine does not chain).
    Link { key: u64 },
    /// A computed exit whose target key was not resolved.
    Indirect { key: u64 },
    /// The engine met a word that is not an op (`ip` is the word index): an
    /// arena bug, reported instead of a panic.
    Invalid,
    /// The engine entered a program that runs elsewhere (the `jit` arm's
    /// native code: [`crate::e1::E1Arena::divert`]); `ip` is its program id.
    /// Nothing of that program has run; the clock is exact at its entry.
    Divert,
}

/// An exit: why, and where the guest resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exit {
    pub reason: ExitReason,
    pub ip: u32,
}

/// A stop owed at the next instruction boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pending {
    None,
    Smc,
    Service,
}

impl Pending {
    pub(crate) fn reason(self) -> Option<ExitReason> {
        match self {
            Pending::None => None,
            Pending::Smc => Some(ExitReason::Smc),
            Pending::Service => Some(ExitReason::Service),
        }
    }
}
