-- SPDX-License-Identifier: GPL-2.0 OR MIT
--
-- incnn.lua: a Wireshark/tshark dissector for incnn's TCP options and
-- frames (docs/wire-format.md; uapi/linux/incnn.h is normative).
--
--   tshark -X lua_script:contrib/wireshark/incnn.lua -r capture.pcap -Y incnn
--   wireshark -X lua_script:contrib/wireshark/incnn.lua capture.pcap
--   (or copy it to ~/.local/lib/wireshark/plugins/)
--
-- It runs after TCP (a postdissector) and adds an "incnn" tree to:
--   - SYNs and SYN-ACKs with the capability option (kind 253, ExID
--     0x1c4e): the frame versions and codecs the sender decodes;
--   - segments with the frame option (kind 253, ExID 0x1c4f): the frame
--     header (version, flags, codec, parameter, original DSCP, orig_len,
--     head_len), head, body and tail, and where the frame sits in the
--     original stream; versions 1 and 2 (a superframe: one wire packet
--     restoring many segments, orig_len up to 64 KB).
--
-- A frame replaces a segment's payload without changing TCP's sequence
-- space: the segment with sequence number S carries, compressed, the
-- stream bytes S .. S + orig_len. incnn.stream.seq and
-- incnn.stream.nxtseq give that range in Wireshark's numbering (relative
-- when tcp.seq is), so the frame holding stream byte N is
--   incnn.stream.seq <= N && incnn.stream.nxtseq > N
-- TCP's own analysis counts the shorter wire length and will report
-- "previous segment not captured" after each frame; that is expected.

local p_incnn = Proto("incnn", "incnn gradient compression")

local EXID_CAP = 0x1c4e
local EXID_FRAME = 0x1c4f
local HDR_LEN = 8

local codec_names = {
	[1] = "inceptionn", [2] = "ebq", [3] = "trunc", [4] = "lz4", [5] = "zebq",
}
-- codecs whose parameter is k of the bound 2^-k (1..30)
local bound_codecs = { [1] = true, [2] = true, [5] = true }
-- codecs whose body is bytes, not fp32 values (no tail)
local byte_codecs = { [4] = true }

local f = {
	cap = ProtoField.bytes("incnn.cap", "Capability option"),
	cap_versions = ProtoField.uint8("incnn.cap.versions", "Frame versions decoded", base.HEX),
	cap_reserved = ProtoField.uint8("incnn.cap.reserved", "Reserved", base.HEX),
	cap_codecs = ProtoField.uint16("incnn.cap.codecs", "Codecs decoded", base.HEX),
	cap_codec = ProtoField.string("incnn.cap.codec", "Decodes codec"),
	cap_old = ProtoField.bytes("incnn.cap.old", "Capability option, 4-byte form (offers nothing)"),
	fopt = ProtoField.bytes("incnn.frame_option", "Frame option"),
	frame = ProtoField.bytes("incnn.frame", "Frame"),
	version = ProtoField.uint8("incnn.version", "Version", base.DEC, nil, 0xf0),
	flags = ProtoField.uint8("incnn.flags", "Flags", base.HEX, nil, 0x0f),
	codec = ProtoField.uint8("incnn.codec", "Codec", base.DEC, codec_names),
	param = ProtoField.uint8("incnn.param", "Parameter", base.DEC),
	setting = ProtoField.string("incnn.setting", "Codec setting"),
	dscp = ProtoField.uint8("incnn.dscp", "Original DSCP", base.DEC, nil, 0xfc),
	rsv = ProtoField.uint8("incnn.rsv", "Reserved", base.HEX, nil, 0x03),
	orig_len = ProtoField.uint16("incnn.orig_len", "Original payload length", base.DEC),
	head_len = ProtoField.uint16("incnn.head_len", "Head length", base.DEC),
	head = ProtoField.bytes("incnn.head", "Head (raw bytes)"),
	body = ProtoField.bytes("incnn.body", "Body"),
	body_len = ProtoField.uint32("incnn.body_len", "Body length", base.DEC),
	floats = ProtoField.uint32("incnn.floats", "fp32 values", base.DEC),
	tail = ProtoField.bytes("incnn.tail", "Tail (raw bytes)"),
	tail_len = ProtoField.uint32("incnn.tail_len", "Tail length", base.DEC),
	seq = ProtoField.uint32("incnn.stream.seq", "Stream bytes from (seq)", base.DEC),
	nxtseq = ProtoField.uint32("incnn.stream.nxtseq", "Stream bytes to (next seq)", base.DEC),
	float_seq = ProtoField.uint32("incnn.stream.float_seq", "First fp32 value at (seq)", base.DEC),
	ratio = ProtoField.float("incnn.ratio", "Ratio (orig_len / frame and option)"),
}
p_incnn.fields = f

local e_malformed = ProtoExpert.new("incnn.malformed", "Malformed incnn frame",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_version = ProtoExpert.new("incnn.unknown_version", "Unknown frame version",
	expert.group.UNDECODED, expert.severity.WARN)
p_incnn.experts = { e_malformed, e_version }

local fe_kind = Field.new("tcp.option_kind")
local fe_srcport = Field.new("tcp.srcport")
local fe_hdr_len = Field.new("tcp.hdr_len")
local fe_len = Field.new("tcp.len")
local fe_seq = Field.new("tcp.seq")

-- the codec and its setting as every incnn tool prints it
-- (incnn_codec_label()): "ebq:2^-10", "trunc:16", "lz4"; "NAME param P"
-- for a parameter the codec does not take, "codec N param P" for an
-- unknown codec
local function setting(codec, param)
	local name = codec_names[codec]
	if not name then
		return "codec " .. codec .. " param " .. param
	elseif bound_codecs[codec] and param >= 1 and param <= 30 then
		return name .. ":2^-" .. param
	elseif codec == 3 and (param == 8 or param == 16 or param == 24) then
		return name .. ":" .. param
	elseif codec == 4 and param == 0 then
		return name
	end
	return name .. " param " .. param
end

-- Capability option at @off (8 bytes): versions, reserved, codec bitmap.
local function dissect_cap(tvb, pinfo, tree, off)
	local t = tree:add(f.cap, tvb(off, 8))
	t:add(f.cap_versions, tvb(off + 4, 1))
	t:add(f.cap_reserved, tvb(off + 5, 1))
	local ct = t:add(f.cap_codecs, tvb(off + 6, 2))
	local bits = tvb(off + 6, 2):uint()
	local names = {}
	for c = 1, 15 do
		if bit.band(bits, bit.lshift(1, c)) ~= 0 then
			local n = codec_names[c] or ("codec " .. c)
			ct:add(f.cap_codec, tvb(off + 6, 2), n)
			names[#names + 1] = n
		end
	end
	t:set_text(string.format("Capability option: versions 0x%02x, codecs %s",
		tvb(off + 4, 1):uint(), table.concat(names, ", ")))
	pinfo.cols.info:append(string.format(" [incnn offer v 0x%02x codecs 0x%04x]",
		tvb(off + 4, 1):uint(), bits))
end

-- The frame in the payload at @off, @len bytes (the segment's sequence
-- number @seq): header, head, body, tail and its place in the stream.
local function dissect_frame(tvb, pinfo, tree, off, len, seq)
	local t = tree:add(f.frame, tvb(off, len))
	if len < HDR_LEN then
		t:add_proto_expert_info(e_malformed, "payload shorter than the 8-byte header")
		return
	end
	local b0 = tvb(off, 1):uint()
	local version = bit.rshift(b0, 4)
	local codec = tvb(off + 1, 1):uint()
	local param = tvb(off + 2, 1):uint()
	local orig_len = tvb(off + 4, 2):uint()
	local head_len = tvb(off + 6, 2):uint()
	t:add(f.version, tvb(off, 1))
	t:add(f.flags, tvb(off, 1))
	t:add(f.codec, tvb(off + 1, 1))
	t:add(f.param, tvb(off + 2, 1))
	t:add(f.setting, tvb(off + 1, 2), setting(codec, param))
	t:add(f.dscp, tvb(off + 3, 1))
	t:add(f.rsv, tvb(off + 3, 1))
	t:add(f.orig_len, tvb(off + 4, 2))
	t:add(f.head_len, tvb(off + 6, 2))
	-- version 2 (a superframe) has version 1's layout; orig_len may
	-- exceed the MSS
	if version ~= 1 and version ~= 2 then
		t:add_proto_expert_info(e_version, "frame version " .. version ..
			": only versions 1 and 2 are dissected")
		return
	end
	if seq then
		t:add(f.seq, tvb(off + 4, 2), seq):set_generated()
		t:add(f.nxtseq, tvb(off + 4, 2), seq + orig_len):set_generated()
		t:add(f.float_seq, tvb(off + 6, 2), seq + head_len):set_generated()
	end
	local tail_len = 0
	if not byte_codecs[codec] and head_len <= orig_len then
		tail_len = (orig_len - head_len) % 4
		t:add(f.floats, tvb(off + 4, 4), math.floor((orig_len - head_len) / 4)):set_generated()
	end
	local body_len = len - HDR_LEN - head_len - tail_len
	if orig_len == 0 or head_len > orig_len or body_len < 0 or len >= orig_len then
		t:add_proto_expert_info(e_malformed, string.format(
			"lengths: frame %d, orig_len %d, head_len %d, tail %d", len,
			orig_len, head_len, tail_len))
		return
	end
	local pos = off + HDR_LEN
	if head_len > 0 then
		t:add(f.head, tvb(pos, head_len))
		pos = pos + head_len
	end
	if body_len > 0 then
		t:add(f.body, tvb(pos, body_len))
	end
	t:add(f.body_len, body_len):set_generated()
	pos = pos + body_len
	if tail_len > 0 then
		t:add(f.tail, tvb(pos, tail_len))
	end
	t:add(f.tail_len, tail_len):set_generated()
	t:add(f.ratio, orig_len / (len + 4)):set_generated()
	t:set_text(string.format("Frame v%d %s: %d bytes -> %d (head %d, tail %d)",
		version, setting(codec, param), orig_len, len, head_len, tail_len))
	local where = seq and string.format(" seq %d..%d", seq, seq + orig_len) or ""
	pinfo.cols.info:append(string.format(" [incnn %s %d->%d%s]",
		setting(codec, param), orig_len, len, where))
end

function p_incnn.dissector(tvb, pinfo, tree)
	local kinds = { fe_kind() }
	if #kinds == 0 then
		return
	end
	local framed, inc = false, nil
	for _, k in ipairs(kinds) do
		if k.value == 253 and k.offset + 4 <= tvb:len() then
			local off = k.offset
			local olen = tvb(off + 1, 1):uint()
			local exid = tvb(off + 2, 2):uint()
			if exid == EXID_CAP or exid == EXID_FRAME then
				inc = inc or tree:add(p_incnn, tvb(off, olen))
			end
			if exid == EXID_CAP and olen == 8 then
				dissect_cap(tvb, pinfo, inc, off)
			elseif exid == EXID_CAP and olen == 4 then
				inc:add(f.cap_old, tvb(off, 4))
			elseif exid == EXID_FRAME and olen == 4 then
				inc:add(f.fopt, tvb(off, 4))
				framed = true
			end
		end
	end
	if not framed then
		return
	end
	-- the payload: after the TCP header that carries the option
	local ports, hdr_lens, lens, seqs = { fe_srcport() }, { fe_hdr_len() }, { fe_len() }, { fe_seq() }
	local sp, hl, ln = ports[#ports], hdr_lens[#hdr_lens], lens[#lens]
	if not (sp and hl and ln) then
		return
	end
	local off = sp.offset + hl.value
	local len = ln.value
	if len == 0 or off + len > tvb:len() then
		return
	end
	local seq = seqs[#seqs] and seqs[#seqs].value or nil
	dissect_frame(tvb, pinfo, inc, off, len, seq)
end

register_postdissector(p_incnn)
