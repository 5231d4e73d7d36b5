// Command snaked is the SSH snake daemon.
package main

func main() {}
