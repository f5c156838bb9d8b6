package nodeid

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// ErrRange reports a node number outside the layout's node range.
var ErrRange = errors.New("nodeid: node out of range")

// ErrNoSource reports that a node source has nothing to offer: an unset environment variable,
// a host without a private IPv4 address.
var ErrNoSource = errors.New("nodeid: no node number available")

// Check reports whether node fits a layout holding nodes distinct node values (see
// layouts.Layout.Nodes). Its error wraps ErrRange.
func Check(node, nodes uint64) error {
	if nodes == 0 || node >= nodes {
		return fmt.Errorf("%w: %d, the layout holds 0 to %d", ErrRange, node, nodes-1)
	}
	return nil
}

// FromEnv reads a node number from the environment variable name (decimal, or 0x-prefixed
// hex) and checks it against nodes. The lookup function is os.LookupEnv when nil; tests pass
// their own. Errors wrap ErrNoSource when the variable is unset or empty, and ErrRange when the
// number does not fit.
func FromEnv(name string, nodes uint64, lookup func(string) (string, bool)) (uint64, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, ok := lookup(name)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return 0, fmt.Errorf("%w: environment variable %s is not set", ErrNoSource, name)
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("nodeid: environment variable %s=%q is not a node number: %w", name, v, err)
	}
	if err := Check(n, nodes); err != nil {
		return 0, fmt.Errorf("environment variable %s: %w", name, err)
	}
	return n, nil
}

// FromPrivateIPv4 derives a node number from the first private IPv4 address (10/8, 172.16/12,
// 192.168/16, as net.IP.IsPrivate defines them) among addrs, keeping its low bits: the
// address modulo nodes, where nodes must be a power of two. With addrs nil it asks
// net.InterfaceAddrs.
//
// Collision risk: two hosts whose addresses agree in the kept bits get the same node number and
// will issue duplicate IDs without any error. With 16 node bits (Sonyflake) that is any two
// hosts in different /16 networks sharing the last two octets; with 10 bits (Twitter) any two
// addresses 1024 apart, which a /21 or larger subnet already holds. Use it only where every
// generating host sits in one subnet no larger than the node range, and prefer a lease where
// hosts come and go.
//
// Errors wrap ErrNoSource when no private IPv4 address is found.
func FromPrivateIPv4(addrs []net.Addr, nodes uint64) (uint64, error) {
	if nodes == 0 || nodes&(nodes-1) != 0 {
		return 0, fmt.Errorf("%w: the layout holds %d node values, the address source needs a power of two", ErrRange, nodes)
	}
	if addrs == nil {
		var err error
		addrs, err = net.InterfaceAddrs()
		if err != nil {
			return 0, fmt.Errorf("nodeid: listing interface addresses: %w", err)
		}
	}
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		default:
			continue
		}
		ip4 := ip.To4()
		if ip4 == nil || !ip4.IsPrivate() {
			continue
		}
		u := uint64(ip4[0])<<24 | uint64(ip4[1])<<16 | uint64(ip4[2])<<8 | uint64(ip4[3])
		return u & (nodes - 1), nil
	}
	return 0, fmt.Errorf("%w: no private IPv4 address among %d interface addresses", ErrNoSource, len(addrs))
}
