//! Valgrind memcheck client requests (MAKE_MEM_UNDEFINED, MAKE_MEM_DEFINED), emitted
//! as valgrind's documented amd64 "special instruction sequence".
//!
//! Soundness: outside valgrind the sequence does nothing: four rotations of rdi by
//! 3 + 13 + 61 + 51 = 128 bits leave it as it was (it is declared clobbered anyway),
//! `xchg rbx, rbx` changes nothing, and rdx keeps the default result. Under valgrind
//! the request reads the six-word argument block that rax points to (a live local
//! array) and only changes memcheck's shadow state of the named bytes, which are a
//! live borrowed value of the given size.

const fn tool_base(a: u8, b: u8) -> u64 {
    ((a as u64) << 24) | ((b as u64) << 16)
}
const MAKE_MEM_UNDEFINED: u64 = tool_base(b'M', b'C') + 1;
const MAKE_MEM_DEFINED: u64 = tool_base(b'M', b'C') + 2;

fn client_request(request: u64, address: u64, length: u64) -> u64 {
    let block: [u64; 6] = [request, address, length, 0, 0, 0];
    let mut result: u64 = 0;
    // SAFETY: see the module comment.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") block.as_ptr(),
            inout("rdi") 0u64 => _,
        );
    }
    result
}

pub fn make_undefined<T>(value: &T) {
    client_request(MAKE_MEM_UNDEFINED, value as *const T as u64, std::mem::size_of::<T>() as u64);
}

pub fn make_defined<T>(value: &T) {
    client_request(MAKE_MEM_DEFINED, value as *const T as u64, std::mem::size_of::<T>() as u64);
}
