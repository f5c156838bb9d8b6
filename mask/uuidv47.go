package mask

import (
	"encoding/binary"

	"github.com/dchest/siphash"
)

// UUIDv47 returns the UUIDv47 facade of the UUIDv7 v7 under key k, exactly as
// stateless-me/uuidv47's uuidv47_encode_v4facade makes it: the 48-bit timestamp XOR the low 48
// bits of SipHash-2-4 over the UUID's random bits, the version nibble set to 4 and the variant
// to RFC 9562's; the random bits stay as they are.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              unix_ts_ms XOR SipHash(k, rand_a‖rand_b)          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   … (48 bits in all)          |  0100 |       rand_a          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|10 |                        rand_b                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                            rand_b                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The SipHash message is 10 bytes: byte 6's low nibble, byte 7, byte 8's low 6 bits, bytes
// 9-15. v7 is not checked: a caller passes a UUIDv7.
func UUIDv47(k Key, v7 [16]byte) [16]byte {
	out := v7
	putTime48(&out, time48(&v7)^k.uuidMask(&v7))
	out[6] = out[6]&0x0f | 0x40
	out[8] = out[8]&0x3f | 0x80
	return out
}

// UUIDv7 returns the UUIDv7 behind a UUIDv47 facade (uuidv47_decode_v4facade): the inverse
// of UUIDv47 under the same key. Under another key it returns a UUIDv7 with another time,
// not the original. The facade is not checked: a caller checks that it shows version 4.
func UUIDv7(k Key, facade [16]byte) [16]byte {
	out := facade
	putTime48(&out, time48(&facade)^k.uuidMask(&facade))
	out[6] = out[6]&0x0f | 0x70
	out[8] = out[8]&0x3f | 0x80
	return out
}

// uuidMask is the low 48 bits of SipHash-2-4 of the 74 random bits of u, which UUIDv47 keeps
// as they are.
func (k Key) uuidMask(u *[16]byte) uint64 {
	var msg [10]byte
	msg[0] = u[6] & 0x0f
	msg[1] = u[7]
	msg[2] = u[8] & 0x3f
	copy(msg[3:], u[9:])
	return siphash.Hash(k.k0, k.k1, msg[:]) & (1<<48 - 1)
}

// ULIDTime masks or unmasks the time of a ULID under key k: its 48-bit time XOR the low 48 bits
// of SipHash-2-4 over its 80 random bits, which stay as they are. The transform is its own
// inverse, so one function does both. The SipHash message is the 10 random bytes followed by
// the byte 'U', so that the same key used for ULIDs and for UUIDv47 never hashes the same
// message for both.
//
//	+------------------------------------------+-------------------------------------+
//	| time (48 bits) XOR SipHash(k, random‖'U') |        random (80 bits), as is      |
//	+------------------------------------------+-------------------------------------+
func ULIDTime(k Key, u [16]byte) [16]byte {
	var msg [11]byte
	copy(msg[:10], u[6:])
	msg[10] = 'U'
	putTime48(&u, time48(&u)^siphash.Hash(k.k0, k.k1, msg[:])&(1<<48-1))
	return u
}

func time48(u *[16]byte) uint64 {
	return uint64(binary.BigEndian.Uint16(u[0:2]))<<32 | uint64(binary.BigEndian.Uint32(u[2:6]))
}

func putTime48(u *[16]byte, t uint64) {
	binary.BigEndian.PutUint16(u[0:2], uint16(t>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(t))
}
