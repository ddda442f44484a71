// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IERC20
/// @notice The part of the ERC-20 interface (https://eips.ethereum.org/EIPS/eip-20) that walletgate's contracts call.
interface IERC20 {
    /// @notice Emitted when `value` tokens move from `from` to `to`; `from` is zero on a mint.
    event Transfer(address indexed from, address indexed to, uint256 value);

    /// @notice Emitted when `owner` sets `spender`'s allowance to `value`.
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// @notice The number of tokens held by `account`.
    function balanceOf(address account) external view returns (uint256);

    /// @notice How many tokens `spender` may still move out of `owner`'s balance.
    function allowance(address owner, address spender) external view returns (uint256);

    /// @notice Moves `value` tokens from the caller to `to`.
    function transfer(address to, uint256 value) external returns (bool);

    /// @notice Lets `spender` move up to `value` of the caller's tokens.
    function approve(address spender, uint256 value) external returns (bool);

    /// @notice Moves `value` tokens from `from` to `to` out of the caller's allowance.
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @notice Calls `token.transferFrom(from, to, value)` and reports whether it really succeeded.
/// @dev Some deployed tokens (USDT on mainnet among them) return nothing instead of a bool, and some return false
///      instead of reverting. Success is therefore: the call did not revert, and it returned either nothing (from a
///      contract: a call to an address without code also "succeeds") or a word equal to 1.
/// @return ok Whether the transfer happened.
/// @return reason The token's return or revert data, for the caller's error.
function safeTransferFrom(IERC20 token, address from, address to, uint256 value)
    returns (bool ok, bytes memory reason)
{
    (bool success, bytes memory returned) = address(token).call(abi.encodeCall(IERC20.transferFrom, (from, to, value)));
    if (!success) return (false, returned);
    if (returned.length == 0) return (address(token).code.length > 0, returned);
    return (returned.length >= 32 && abi.decode(returned, (uint256)) == 1, returned);
}
