//go:build tools

// Package tools records the commands this module builds, so that
// go mod tidy keeps their dependencies in go.sum.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
