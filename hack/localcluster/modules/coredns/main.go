// CoreDNS with only the plugins the local cluster's Corefile names. Upstream's main links every
// plugin, cloud DNS providers and their SDKs included; coremain and the plugin
// packages are CoreDNS's documented way to assemble a smaller server.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
