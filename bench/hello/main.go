// Command hello is the Go hello-world that teamrun's start-up is compared
// with (bench/compare.sh).
package main

import "fmt"

func main() { fmt.Println("hello") }
