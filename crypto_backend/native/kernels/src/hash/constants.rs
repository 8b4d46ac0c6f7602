//! The constants of the hash to G2 (RFC 9380, section 8.8.2 and appendix E.3: the
//! 3-isogenous curve E', Z, and the isogeny's coefficients), each Fp coordinate in
//! our Montgomery form (x 2^416 mod p, 52-bit limbs, lowest first), except
//! `TWO_384_R2`, a plain multiplier.

use crate::field::fpx8::Limbs;

/// c0, c1 of one Fp2 constant.
pub(super) type Fp2Limbs = [Limbs; 2];

/// A' = 240 i, of the isogenous curve E' : y^2 = x^3 + A' x + B'.
pub(super) const A: Fp2Limbs = [
    [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
    [
        0x28dbe5b5dbe7b,
        0x18b81ae634e1a,
        0xbe549cbf63190,
        0x7f2baea047ee1,
        0xcbca63971569e,
        0xd5aa91c16ae50,
        0x8bf4b19186595,
        0x1592c,
    ],
];
/// B' = 1012 (1 + i).
pub(super) const B: Fp2Limbs = [
    [
        0xcd9f3bcff5c14,
        0x387408d33d90b,
        0xdfc0cb4fddbb9,
        0xc95027a85d7e4,
        0xaa1629fced22a,
        0x78541f03c0fd4,
        0x823ddac362126,
        0x16ec6,
    ],
    [
        0xcd9f3bcff5c14,
        0x387408d33d90b,
        0xdfc0cb4fddbb9,
        0xc95027a85d7e4,
        0xaa1629fced22a,
        0x78541f03c0fd4,
        0x823ddac362126,
        0x16ec6,
    ],
];
/// -B'.
pub(super) const MINUS_B: Fp2Limbs = [
    [
        0x2260c43004e97,
        0xc63d4b2cc2294,
        0x8b4e96f20d046,
        0x496f3f887522a,
        0xcc314abb6215a,
        0xa353973f8aaf8,
        0x9c65bd3b07924,
        0x314a,
    ],
    [
        0x2260c43004e97,
        0xc63d4b2cc2294,
        0x8b4e96f20d046,
        0x496f3f887522a,
        0xcc314abb6215a,
        0xa353973f8aaf8,
        0x9c65bd3b07924,
        0x314a,
    ],
];
/// Z = -(2 + i), the non-square of the map.
pub(super) const Z: Fp2Limbs = [
    [
        0x16fe2ae2be1f8,
        0x3275cee036ea1,
        0xbf76a4aea7905,
        0xaf20fe03aabd9,
        0x9faa6cb288b3f,
        0x3871fe8aef139,
        0x7c694b848a04a,
        0xa704,
    ],
    [
        0x8b7f15715f0fc,
        0x993ae7701b750,
        0xdfbb525753c82,
        0xd7907f01d55ec,
        0xcfd536594459f,
        0x1c38ff457789c,
        0x3e34a5c245025,
        0x5382,
    ],
];
/// Z A': the denominator of x1 = B'/(Z A') where Z^2 u^4 + Z u^2 = 0.
pub(super) const Z_A: Fp2Limbs = [
    [
        0x28dbe5b5dbe7b,
        0x18b81ae634e1a,
        0xbe549cbf63190,
        0x7f2baea047ee1,
        0xcbca63971569e,
        0xd5aa91c16ae50,
        0x8bf4b19186595,
        0x1592c,
    ],
    [
        0x8e4834943d860,
        0xcbf2723395b0b,
        0x59758b050f4df,
        0x272771211565b,
        0x54fa2242739cd,
        0x8bfa4903c18f9,
        0x255dccd9c696a,
        0x8dc9,
    ],
];
/// A square root of -125 = N(Z)^3 (-1) in Fp (-1 and 125 are non-squares, p = 3 mod 4).
pub(super) const SQRT_MINUS_125: Limbs = [
    0x80ebdfb6a4237,
    0xe53aa92a889ee,
    0x9acd131ad49c5,
    0xbb24397b6880f,
    0xa0f6390c35435,
    0x9d1a752c04af,
    0x8bdd1b18be86f,
    0x18190,
];
/// 2^384 R^2 mod p, plain: the product of h with it is h 2^384 in Montgomery form.
pub(super) const TWO_384_R2: Limbs = [
    0xa88c5d24834b0,
    0xd5359b14b0f9e,
    0x9c8a4699a6624,
    0x7ab4b3203bbb9,
    0x2f932a92b246b,
    0x2bcfcd2a29d1,
    0x433fdf679d883,
    0x127a0,
];
/// k_(1,0..3): x numerator, lowest degree first.
pub(super) const X_NUM: [Fp2Limbs; 4] = [
    [
        [
            0xc9e60f434cbcc,
            0xf73d468a97617,
            0x874b2588c3419,
            0x554010c12cafa,
            0x2dfa0d378aad6,
            0x6cfc24603d243,
            0x408c648ae6c6e,
            0x142e0,
        ],
        [
            0xc9e60f434cbcc,
            0xf73d468a97617,
            0x874b2588c3419,
            0x554010c12cafa,
            0x2dfa0d378aad6,
            0x6cfc24603d243,
            0x408c648ae6c6e,
            0x142e0,
        ],
    ],
    [
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        [
            0x7952e3d8ff467,
            0x43b74d2af3fa1,
            0xdb9910283bd5c,
            0xe341859f481c7,
            0x5820bf5b4687d,
            0x420ac14d7ae08,
            0x4655dcb13f79f,
            0x5400,
        ],
    ],
    [
        [
            0x3b568e137db22,
            0xdd7d036a85dff,
            0xc7bb290cd7751,
            0x97bef0c8c5423,
            0x8f135aae84583,
            0xecce7a7ae8662,
            0x6c26dda695155,
            0xa608,
        ],
        [
            0xb4a971ec7cf89,
            0x2134509579da0,
            0xa3543935134ae,
            0x7b0076680d5eb,
            0xe7341a09cae01,
            0x2ed93bc86346a,
            0xb27cba57d48f5,
            0xfa08,
        ],
    ],
    [
        [
            0x979c8bd6f440a,
            0xd23d4e48e071a,
            0x8d277e76b9146,
            0xcfc5254388e05,
            0x74f83057ed90b,
            0x5857d3401ffaa,
            0x38c92bcd9e07e,
            0x532e,
        ],
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
    ],
];
/// k_(2,0..1): x denominator x^2 + k_(2,1) x + k_(2,0).
pub(super) const X_DEN: [Fp2Limbs; 2] = [
    [
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        [
            0x1bbe07e307186,
            0x2ade7f87bcbe8,
            0x11d7c8f4b9cbb,
            0x9a2c13d87ddc7,
            0xfc0ee706e43ad,
            0x6cdbd3db7b4dd,
            0xd1dc4eb9a1a54,
            0xbbb1,
        ],
    ],
    [
        [
            0x460afeaf7b431,
            0xcd5122beb5b19,
            0xc4664aadd2de0,
            0x1d78417c77713,
            0xa4d7d1f9b9711,
            0x4b2b884890e,
            0x717302e000d24,
            0xf618,
        ],
        [
            0xa9f501507f67a,
            0x316031414a086,
            0xa6a9179417e1f,
            0xf54725b45b2fb,
            0xd16fa2be95c73,
            0x1b5c8abb031be,
            0xad30951e68d27,
            0xa9f8,
        ],
    ],
];
/// k_(3,0..3): y numerator.
pub(super) const Y_NUM: [Fp2Limbs; 4] = [
    [
        [
            0x8948ed258662c,
            0x1c85ccb127737,
            0x3fb4e4e151aae,
            0xd42744b819fcc,
            0x67ea2d3eaedeb,
            0x2c57b9d2101fa,
            0x5d74444e6153d,
            0x144a0,
        ],
        [
            0x8948ed258662c,
            0x1c85ccb127737,
            0x3fb4e4e151aae,
            0xd42744b819fcc,
            0x67ea2d3eaedeb,
            0x2c57b9d2101fa,
            0x5d74444e6153d,
            0x144a0,
        ],
    ],
    [
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        [
            0x2dd011e450e15,
            0x5b4c550d2bb85,
            0x698df26f08458,
            0x2d0ef4f9106e2,
            0x5a91ddfc67039,
            0x880d8392f7af3,
            0x7c49f6c94ec71,
            0xf6c0,
        ],
    ],
    [
        [
            0x5254b8f63bd1a,
            0xff2d24abcca0,
            0x8731cdbb7f057,
            0x46dfeecc6fffd,
            0x2ebdc7610d0c3,
            0x25407905d779c,
            0xe890292b1f1a0,
            0x14d0c,
        ],
        [
            0x9dab4709bed91,
            0xeebe81b542eff,
            0xe3dd94866bba8,
            0xcbdf786462a11,
            0x4789ad57422c1,
            0xf6673d3d74331,
            0x36136ed34a8aa,
            0x5304,
        ],
    ],
    [
        [
            0xc2cbd163005c4,
            0xb90c733d0a561,
            0xc2fd1759b423d,
            0xc73de30a0975d,
            0xd28793083af54,
            0xf4fd33177d1fa,
            0xac2a016511c07,
            0xf9a6,
        ],
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
    ],
];
/// k_(4,0..2): y denominator x^3 + k_(4,2) x^2 + k_(4,1) x + k_(4,0).
pub(super) const Y_DEN: [Fp2Limbs; 3] = [
    [
        [
            0xc6742f52353ce,
            0x3d4552e6d030,
            0x94eff13885463,
            0x7789a8b14de8b,
            0xfbca80b8baf07,
            0x55d78a9e4c798,
            0xade2a85cf6964,
            0x12608,
        ],
        [
            0xc6742f52353ce,
            0x3d4552e6d030,
            0x94eff13885463,
            0x7789a8b14de8b,
            0xfbca80b8baf07,
            0x55d78a9e4c798,
            0xade2a85cf6964,
            0x12608,
        ],
    ],
    [
        [0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        [
            0x633a17a91a9e7,
            0x81ea2a9736818,
            0xca77f89c42a31,
            0xbbc4d458a6f45,
            0x7de5405c5d783,
            0x2aebc54f263cc,
            0x56f1542e7b4b2,
            0x9304,
        ],
    ],
    [
        [
            0xf1107e073b8f4,
            0x34a10a1e10ad5,
            0xf111bee3c6ed1,
            0x22d4aea249d95,
            0x3c20009a6e8d7,
            0x729ce62ac702f,
            0x1adab850cc690,
            0xa11c,
        ],
        [
            0xfeef81f8bf1b7,
            0xca1049e1ef0c9,
            0x79fda35e23d2e,
            0xefeab88e88c79,
            0x3a27741de0aad,
            0xa90ad01884a9e,
            0x3c8dfad9d3ba,
            0xfef5,
        ],
    ],
];
