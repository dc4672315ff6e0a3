//! SHA-256 (FIPS 180-4) and SHA-256-crypt (`$5$`, Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512"), the scheme PVE hashes a cloud-init password with.
//!
//! Written here rather than taken from a crate: it is small, it is only ever used to compare a
//! task's password with the hash PVE stores (never to store one), and the tests below hold the
//! standard vectors of both specifications.

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

/// The SHA-256 digest of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// `len` bytes of `digest` repeated (the spec's steps 16 and 20: P and S sequences).
fn repeated(digest: &[u8; 32], len: usize) -> Vec<u8> {
    digest.iter().copied().cycle().take(len).collect()
}

const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A `$5$` hash's settings: `rounds=N$` (when given) and the salt (at most 16 characters).
struct Setting<'a> {
    rounds: Option<u32>,
    salt: &'a [u8],
}

/// `$5$[rounds=N$]salt[$hash]` → its settings; `None` for another scheme, or for rounds outside
/// the spec's 1000 to 999999999 (the spec clamps them, C libraries differ: not compared).
fn setting(hash: &str) -> Option<Setting<'_>> {
    let rest = hash.strip_prefix("$5$")?;
    let (rounds, rest) = match rest.strip_prefix("rounds=") {
        Some(r) => {
            let (n, rest) = r.split_once('$')?;
            let n: u32 = n.parse().ok().filter(|n| (1000..=999_999_999).contains(n))?;
            (Some(n), rest)
        }
        None => (None, rest),
    };
    let salt = rest.split('$').next().unwrap_or_default().as_bytes();
    Some(Setting { rounds, salt: &salt[..salt.len().min(16)] })
}

/// SHA-256-crypt of `password` with the settings of `hash` (a `$5$` hash or its setting
/// prefix): the whole `$5$...$...` string, or `None` when `hash` is not a `$5$` one.
pub fn sha256_crypt(password: &str, hash: &str) -> Option<String> {
    let Setting { rounds, salt } = setting(hash)?;
    let p = password.as_bytes();
    let b = sha256(&[p, salt, p].concat());
    let mut a = [p, salt].concat();
    a.extend(repeated(&b, p.len()));
    let mut n = p.len();
    while n > 0 {
        if n & 1 == 1 {
            a.extend_from_slice(&b);
        } else {
            a.extend_from_slice(p);
        }
        n >>= 1;
    }
    let mut c = sha256(&a);
    let dp = sha256(&p.repeat(p.len()));
    let p_seq = repeated(&dp, p.len());
    let ds = sha256(&salt.repeat(16 + c[0] as usize));
    let s_seq = repeated(&ds, salt.len());
    for i in 0..rounds.unwrap_or(5000) {
        let mut ctx = Vec::with_capacity(32 + 2 * p_seq.len() + s_seq.len() + 32);
        ctx.extend_from_slice(if i % 2 == 1 { &p_seq } else { &c });
        if i % 3 != 0 {
            ctx.extend_from_slice(&s_seq);
        }
        if i % 7 != 0 {
            ctx.extend_from_slice(&p_seq);
        }
        ctx.extend_from_slice(if i % 2 == 1 { &c } else { &p_seq });
        c = sha256(&ctx);
    }
    let mut out = String::from("$5$");
    if let Some(r) = rounds {
        out.push_str(&format!("rounds={r}$"));
    }
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    let mut b64 = |b2: u8, b1: u8, b0: u8, chars: usize| {
        let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
        for _ in 0..chars {
            out.push(ITOA64[(w & 0x3f) as usize] as char);
            w >>= 6;
        }
    };
    for i in 0..10 {
        // the spec's byte order: (0,10,20), (21,1,11), (12,22,2), ... each group turned by one
        let (x, y, z) = (i, (i + 10) % 30, (i + 20) % 30);
        let (x, y, z) = match i % 3 {
            0 => (x, y, z),
            1 => (z, x, y),
            _ => (y, z, x),
        };
        b64(c[x], c[y], c[z], 4);
    }
    b64(0, c[31], c[30], 3);
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hex(d: [u8; 32]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// FIPS 180-4's examples (NIST CSRC "SHA256.pdf") and the one-million-'a' vector.
    #[test]
    fn sha256_standard_vectors() {
        assert_eq!(hex(sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(hex(sha256(&[b'a'; 1_000_000])), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }

    /// The test vectors of Drepper's specification (each also what glibc's crypt(3) gives).
    #[test]
    fn sha256_crypt_spec_vectors() {
        let vectors = [
            ("$5$saltstring", "Hello world!", "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"),
            (
                "$5$rounds=10000$saltstringsaltstring",
                "Hello world!",
                "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA",
            ),
            (
                "$5$rounds=5000$toolongsaltstring",
                "This is just a test",
                "$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5",
            ),
            (
                "$5$rounds=1400$anotherlongsaltstring",
                "a very much longer text to encrypt.  This one even stretches over morethan one line.",
                "$5$rounds=1400$anotherlongsalts$Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1",
            ),
            (
                "$5$rounds=77777$short",
                "we have a short salt string but not a short password",
                "$5$rounds=77777$short$JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/",
            ),
            (
                "$5$rounds=123456$asaltof16chars..",
                "a short string",
                "$5$rounds=123456$asaltof16chars..$gP3VQ/6X7UUEW3HkBn2w1/Ptq2jxPyzV/cZKmF/wJvD",
            ),
        ];
        for (setting, password, want) in vectors {
            assert_eq!(sha256_crypt(password, setting).unwrap(), want, "{setting}");
            // a whole stored hash gives its settings too
            assert_eq!(sha256_crypt(password, want).unwrap(), want);
        }
    }

    #[test]
    fn other_schemes_and_clamped_rounds_are_not_hashed() {
        for hash in ["$6$salt$x", "$y$j9T$salt$x", "$1$salt$x", "plain", "$5$rounds=10$roundstoolow", "$5$rounds=x$s"] {
            assert_eq!(sha256_crypt("pw", hash), None, "{hash}");
        }
    }
}
