import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// "When it has `id` (any JSON value), its response carries the same `id`", minified so that the response
/// stays on one line.
@Suite struct IDEchoTests {
    @Test func aNumberIDIsEchoedInSuccessAndErrorResponses() {
        #expect(respond(to: #"{"op":"ping","id":42}"#) == "{\"ok\":true,\"id\":42}\n")
        #expect(respond(to: #"{"id":-1.5e+3,"op":"ping"}"#) == "{\"ok\":true,\"id\":-1.5e+3}\n")
        #expect(respond(to: #"{"op":"nope","id":42}"#).hasPrefix("{\"ok\":false,\"id\":42,\"error\":{\"code\":\"unknown_op\""))
    }

    @Test func aStringIDIsEchoedInSuccessAndErrorResponses() {
        #expect(respond(to: #"{"op":"ping","id":"req-1"}"#) == "{\"ok\":true,\"id\":\"req-1\"}\n")
        #expect(respond(to: #"{"op":"ping","id":"a \" b\\ c"}"#) == #"{"ok":true,"id":"a \" b\\ c"}"# + "\n")
        #expect(respond(to: #"{"op":"check","id":"req-2"}"#).hasPrefix(#"{"ok":false,"id":"req-2","error":{"code":"bad_request""#))
    }

    @Test func anObjectIDIsEchoedMinifiedInSuccessAndErrorResponses() {
        let id = #"{ "client" : "ios" ,\#t"seq" : [ 1 , 2 ] , "note" : "keep  these spaces" }"#
        let minified = #"{"client":"ios","seq":[1,2],"note":"keep  these spaces"}"#
        #expect(respond(to: #"{"op":"ping","id":\#(id)}"#) == #"{"ok":true,"id":\#(minified)}"# + "\n")
        #expect(respond(to: #"{"op":"fly","id":\#(id)}"#).hasPrefix(#"{"ok":false,"id":\#(minified),"error":"#))
    }

    @Test func anArrayIDIsEchoedMinifiedInSuccessAndErrorResponses() {
        #expect(respond(to: #"{"op":"ping","id":[ 1, "two" ,null, {} ]}"#) == #"{"ok":true,"id":[1,"two",null,{}]}"# + "\n")
        #expect(respond(to: #"{"op":"grant","id":[ 1, "two" ],"user":"u"}"#)
            .hasPrefix(#"{"ok":false,"id":[1,"two"],"error":{"code":"bad_request""#))
    }

    @Test func aNullIDIsEchoedAsNullInSuccessAndErrorResponses() {
        #expect(respond(to: #"{"op":"ping","id":null}"#) == "{\"ok\":true,\"id\":null}\n")
        #expect(respond(to: #"{"op":"fly","id":null}"#).hasPrefix("{\"ok\":false,\"id\":null,\"error\":"))
    }

    @Test func booleanIDsAreEchoed() {
        #expect(respond(to: #"{"op":"ping","id":true}"#) == "{\"ok\":true,\"id\":true}\n")
        #expect(respond(to: #"{"op":"ping","id":false}"#) == "{\"ok\":true,\"id\":false}\n")
    }

    @Test func aRequestWithoutIDGetsAResponseWithoutID() {
        #expect(respond(to: #"{"op":"ping"}"#) == "{\"ok\":true}\n")
        #expect(!respond(to: #"{"op":"fly"}"#).contains("\"id\""))
    }

    @Test func anIDWithNewlinesBetweenTokensIsEchoedOnOneLine() throws {
        let line = "{\"op\":\"ping\",\"id\":{\n\"a\":\r\n[1,\t2]\n}}"
        let response = respond(to: line)
        #expect(response == "{\"ok\":true,\"id\":{\"a\":[1,2]}}\n")
        #expect(response.dropLast().contains("\n") == false)
        let parsed = try parseJSONObject(response)
        #expect((parsed["id"] as? [String: Any])?["a"] as? [Int] == [1, 2])
    }

    @Test func anIDIsEchoedWithTheRightBytesWhenTheLineIsPartOfALargerBuffer() {
        var buffer = ByteBuffer(string: "xxxxx{\"op\":\"ping\",\"id\":\"req-9\"}")
        buffer.moveReaderIndex(forwardBy: 5)
        let decoded = RequestDecoder.decode(line: buffer)
        #expect(encode(.pong, id: decoded.id) == "{\"ok\":true,\"id\":\"req-9\"}\n")
    }

    @Test func aBadJSONLineHasNoIDToEcho() {
        #expect(respond(to: #"{"op":"ping","id":7"#).hasPrefix("{\"ok\":false,\"error\":{\"code\":\"bad_json\""))
    }
}
