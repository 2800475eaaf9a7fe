// Loads compose.yaml with compose-go, the loader Docker Compose itself uses, in strict
// mode, and checks what the deployment relies on. Run by test/deploy/validate.sh.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check <compose.yaml>")
		os.Exit(2)
	}
	options, err := cli.NewProjectOptions(
		[]string{os.Args[1]},
		cli.WithName("docflow-api"),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	service, err := project.GetService("docflow-api")
	if err != nil {
		fail(err)
	}
	if service.Deploy == nil || service.Deploy.Replicas == nil || *service.Deploy.Replicas < 2 {
		fail(fmt.Errorf("docflow-api must run at least two replicas"))
	}
	if service.StopGracePeriod == nil || time.Duration(*service.StopGracePeriod) < 15*time.Second {
		fail(fmt.Errorf("stop_grace_period must exceed drain + shutdown (15 s)"))
	}
	uri := service.Environment["MONGODB_URI"]
	if uri == nil || len(*uri) == 0 {
		fail(fmt.Errorf("MONGODB_URI must be set"))
	}
	if _, err := project.GetService("mongodb"); err != nil {
		fail(err)
	}
	fmt.Printf("compose.yaml: %d services, docflow-api x%d, MONGODB_URI=%s\n",
		len(project.Services), *service.Deploy.Replicas, *uri)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compose.yaml:", err)
	os.Exit(1)
}
