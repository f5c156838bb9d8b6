// Package interop holds no code: its tests check idkit's text forms against other
// implementations of them (go.jetify.com/typeid for TypeIDs), so that those libraries are
// test-only dependencies of this package and never reach a program that imports idkit.
package interop
