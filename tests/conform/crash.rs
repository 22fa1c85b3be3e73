// Conformance fixture: with an argument, leaf() reads through a null
// pointer at its first instruction; Rust's runtime handles SIGSEGV (its
// stack-overflow check) and returns, and the fault comes again.
#[inline(never)]
fn leaf(p: *const i32) -> i32 {
    unsafe { std::ptr::read_volatile(p) + 1 }
}

#[inline(never)]
fn outer(p: *const i32) -> i32 {
    leaf(p) * 2
}

fn main() {
    let x: i32 = 20;
    let p: *const i32 = if std::env::args().count() > 1 { std::ptr::null() } else { &x };
    std::process::exit(outer(p) & 1);
}
