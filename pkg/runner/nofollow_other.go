//go:build !unix

package runner

// noFollow: no such open flag here.
const noFollow = 0
