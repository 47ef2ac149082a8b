from tau.portal.cli.main import main

main()
