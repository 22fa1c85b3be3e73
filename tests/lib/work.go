// SPDX-License-Identifier: BSD-2-Clause
//
// Copyright (c) 2026 The hwtrace authors
//
// The Go fixture of the shell tests (go_work in hwtr_test.sh builds it):
// main calls work 6 times and the method (*Acc).Add 4 times.

package main

import "fmt"

type Acc struct{ n int }

//go:noinline
func (a *Acc) Add(i int) { a.n += i }

//go:noinline
func work(i int) int { return i*3 + 1 }

func main() {
	s := 0
	a := &Acc{}
	for i := 0; i < 6; i++ {
		s += work(i)
	}
	for i := 0; i < 4; i++ {
		a.Add(i)
	}
	fmt.Println(s, a.n)
}
