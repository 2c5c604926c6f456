from pagebench.cli.app import main

main()
