// Conformance fixture: work() runs exactly 100 times.
#[inline(never)]
fn work(i: u32) -> u32 {
    i.wrapping_mul(3).wrapping_add(1)
}

fn main() {
    let mut s: u32 = 0;
    let mut i: u32 = 0;
    while unsafe { std::ptr::read_volatile(&i) } < 100 {
        s = s.wrapping_add(work(unsafe { std::ptr::read_volatile(&i) }));
        i += 1;
    }
    println!("{}", s);
}
