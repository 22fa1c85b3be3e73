// Conformance fixture: main.work runs exactly 100 times.
package main

import "fmt"

//go:noinline
func work(i int) int {
	return i*3 + 1
}

func main() {
	s := 0
	for i := 0; i < 100; i++ {
		s += work(i)
	}
	fmt.Println(s)
}
