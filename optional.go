package idkit

// maxUnwrap bounds the chain As follows, so that a wrapper that unwraps to itself cannot hang
// it.
const maxUnwrap = 100

// As returns the first value along v's chain of wrappers that is a T: v itself, then what its
// Unwrap method returns, and so on, as errors.As walks wrapped errors and
// http.ResponseController reaches through ResponseWriter wrappers. A wrapper is a value with a
// method Unwrap() Scheme or Unwrap() Codec; a wrapper of your own joins the chain by having one.
//
// Use As, not a type assertion, to reach the optional interfaces of a Scheme or Codec
// (Layouter, Noder, StatsReporter, Fenced, TimeRanger, Widther, or one a package defines): what
// New and NewCodec return for a registered scheme with prefix= or mask= wraps the scheme, and
// a type assertion sees only the wrapper's own methods (Scheme, Batcher, ContextScheme,
// ContextBatcher, io.Closer, Formatter). As finds them on the built-in schemes too, which New
// does not wrap. Bounds is As for TimeRanger, with an error that says when there is none.
func As[T any](v any) (T, bool) {
	for range maxUnwrap {
		if t, ok := v.(T); ok {
			return t, true
		}
		switch w := v.(type) {
		case interface{ Unwrap() Scheme }:
			v = w.Unwrap()
		case interface{ Unwrap() Codec }:
			v = w.Unwrap()
		default:
			v = nil
		}
		if v == nil {
			break
		}
	}
	var zero T
	return zero, false
}
