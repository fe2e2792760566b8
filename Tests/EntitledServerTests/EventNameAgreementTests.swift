import EntitledClient
import EntitledCore
import Testing

/// The Swift client and the server know the same lifecycle event names, both ways: a name the client
/// sends that the server does not know is refused (`bad_request`) at the receiver's first such event, and a
/// name the server takes that the client lacks is an event the receivers cannot send.
@Suite struct EventNameAgreementTests {
    @Test func everyEventNameTheClientSendsIsOneTheServerTakes() {
        for name in EntitledEventName.allCases {
            #expect(LifecycleEvent.Kind.Name(rawValue: name.rawValue) != nil, "the server does not take \(name.rawValue)")
        }
    }

    @Test func everyEventNameTheServerTakesIsOneTheClientCanSend() {
        for name in LifecycleEvent.Kind.Name.allCases {
            #expect(EntitledEventName(rawValue: name.rawValue) != nil, "the client cannot send \(name.rawValue)")
        }
    }

    @Test func theClientListsTheEventTypesInTheServersOrder() {
        #expect(EntitledRequest.Names.eventTypes == LifecycleEvent.Kind.allNames)
    }
}
