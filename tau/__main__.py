from tau.cli.main import main

main()
