/// The commands of the entitlement catalog: define, undefine, catalog.
extension CommandSpec {
    static let define = CommandSpec(
        .define,
        arguments: "ENTITLEMENT PRODUCT... [reason=TEXT]",
        summary: "Set the products that unlock an entitlement, replacing the ones it had.",
        details: ["At least one PRODUCT; undefine removes an entitlement.", "reason=TEXT is kept in the history."],
        example: "define pro prod_pro_m prod_pro_y",
        options: [.reason]
    )

    static let undefine = CommandSpec(
        .undefine,
        arguments: "ENTITLEMENT [reason=TEXT]",
        summary: "Remove an entitlement from the catalog: no product unlocks it any more.",
        details: [
            "Memberships stay as they are; checks of entitlement:NAME answer not active for everyone.",
            "reason=TEXT is kept in the history.",
            "Interactively it shows the entitlement and its products and asks first; scripts and one-shot commands need --yes.",
        ],
        example: "undefine pro reason=\"replaced by premium\"",
        options: [.reason]
    )

    static let catalog = CommandSpec(.catalog, summary: "List every entitlement and the products that unlock it.")
}
