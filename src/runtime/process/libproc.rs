//! macOS: a process as `proc_pidinfo(PROC_PIDTBSDINFO)` tells it (what `ps` reads; there
//! is no `/proc`). Its start is the second and microsecond it began, as one number of
//! microseconds since the epoch.

use super::Stat;

pub(super) fn stat(pid: u32) -> Option<Stat> {
    let pid = libc::c_int::try_from(pid).ok()?;
    // SAFETY: proc_bsdinfo is plain integers and arrays of them: all zeroes is a value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = libc::c_int::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: `info` is a writable proc_bsdinfo of `size` bytes for the whole call.
    let got = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            std::ptr::from_mut(&mut info).cast(),
            size,
        )
    };
    // Anything short of the whole struct is no answer (a gone pid gives 0).
    if got != size {
        return None;
    }
    let name: Vec<u8> = info
        .pbi_comm
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Some(Stat {
        comm: String::from_utf8_lossy(&name).into_owned(),
        ppid: info.pbi_ppid,
        start: info
            .pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
    })
}
