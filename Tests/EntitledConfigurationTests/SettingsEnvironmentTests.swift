import EntitledConfiguration
import Testing

/// `SettingsEnvironment` and `SettingTable`'s naming: which variables are settings, which are typos, and
/// what a flag's variable may say.
@Suite struct SettingsEnvironmentTests {
    let table = ExampleSettings.table

    @Test func eachSettingsVariableIsThePrefixAndItsNameInCapitalsWithUnderscores() throws {
        #expect(table.environmentVariable(of: try #require(table.named("data-dir"))) == "ENTITLED_DATA_DIR")
        #expect(table.configurationVariable == "ENTITLED_CONFIG")
        let stores = SettingTable(keys: [], keyPrefix: "entitled-stores", keyWording: "long option names", fileExample: "{}")
        #expect(stores.environmentPrefix == "ENTITLED_STORES_")
    }

    @Test func anEmptyVariableCountsAsUnset() throws {
        let environment = try SettingsEnvironment(environment: ["ENTITLED_PORT": "", "ENTITLED_DATA_DIR": "/data"], table: table)
        #expect(environment.variables == ["ENTITLED_DATA_DIR": "/data"])
    }

    @Test(arguments: ["true", "FALSE", "1", "0", "True"])
    func aFlagsVariableTakesTrueFalseOneOrZeroInAnyCase(text: String) throws {
        let environment = try SettingsEnvironment(environment: ["ENTITLED_INSECURE_NO_AUTH": text], table: table)
        #expect(environment.variables["ENTITLED_INSECURE_NO_AUTH"] == text)
    }

    @Test(arguments: ["yes", "no", "on", "2"])
    func aFlagsVariableOfAnythingElseIsRefusedNamingTheVariableAndTheValue(text: String) {
        let error = ExampleSettings.error { _ = try SettingsEnvironment(environment: ["ENTITLED_INSECURE_NO_AUTH": text], table: table) }
        #expect(error?.code == "config_invalid_environment_flag")
        #expect(error?.message == "ENTITLED_INSECURE_NO_AUTH must be true, false, 1 or 0, not \"\(text)\"")
    }

    @Test func variablesOfThePrefixThatAreNoSettingAreCollectedSortedAndOthersProgramsAreNot() throws {
        let environment = try SettingsEnvironment(
            environment: [
                "ENTITLED_PROT": "7117", "ENTITLED_DATA_DRI": "/data", "ENTITLED_PORT": "7117", "ENTITLED_CONFIG": "/etc/entitled.json",
                "ENTITLED_TOKEN": "secret-of-entitlectl", "ENTITLED_STORES_LISTEN": "127.0.0.1:8080", "HOME": "/root",
            ],
            table: table
        )
        #expect(environment.unknownVariables == ["ENTITLED_DATA_DRI", "ENTITLED_PROT"])
        #expect(environment.variables["ENTITLED_TOKEN"] == nil, "another program's secret never reaches the reader")
        #expect(environment.variables["ENTITLED_CONFIG"] == "/etc/entitled.json")
    }

    @Test func anUnknownVariableIsDescribedWithTheClosestSettingsVariable() {
        #expect(table.describing(unknownVariable: "ENTITLED_DATA_DRI") == "ENTITLED_DATA_DRI (did you mean ENTITLED_DATA_DIR?)")
        #expect(table.describing(unknownVariable: "ENTITLED_SOMETHING_ELSE") == "ENTITLED_SOMETHING_ELSE")
    }
}
