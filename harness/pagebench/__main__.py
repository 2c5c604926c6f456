from pagebench.cli.main import main

main()
